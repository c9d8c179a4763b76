package sim

// eventQueue is a binary min-heap of events ordered by (at, seq). It is written
// out rather than built on container/heap to avoid boxing every event in an
// interface on the simulator's hottest path.
type eventQueue struct{ h []event }

func (q *eventQueue) Len() int     { return len(q.h) }
func (q *eventQueue) Peek() *event { return &q.h[0] }

func less(a, b *event) bool { return a.at < b.at || (a.at == b.at && a.seq < b.seq) }

func (q *eventQueue) Push(e event) {
	q.h = append(q.h, e)
	i := len(q.h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !less(&q.h[i], &q.h[p]) {
			break
		}
		q.h[i], q.h[p] = q.h[p], q.h[i]
		i = p
	}
}

func (q *eventQueue) Pop() event {
	top := q.h[0]
	last := len(q.h) - 1
	q.h[0] = q.h[last]
	q.h[last] = event{} // let the GC have the message
	q.h = q.h[:last]
	i := 0
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < last && less(&q.h[l], &q.h[m]) {
			m = l
		}
		if r < last && less(&q.h[r], &q.h[m]) {
			m = r
		}
		if m == i {
			return top
		}
		q.h[i], q.h[m] = q.h[m], q.h[i]
		i = m
	}
}
