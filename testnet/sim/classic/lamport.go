package classic

import (
	"time"

	"github.com/dhtsync/dhtsync/core"
)

// Messages of Lamport's algorithm: request, reply, release (3(N-1) per entry).
type (
	LamportRequest struct{ TS uint64 }
	LamportReply   struct{ TS uint64 }
	LamportRelease struct{ TS uint64 }
)

// LamportNode keeps every process's request in a timestamp-ordered queue and
// enters when its own request heads the queue and it has heard a later
// timestamp from everyone.
type LamportNode struct {
	peers
	clock      uint64
	queue      []stamp
	mine       stamp
	requesting bool
	inside     bool
	latest     []uint64 // the largest timestamp heard from each process
}

func (l *LamportNode) tick(ts uint64) { l.clock = max(l.clock, ts) + 1 }

// Acquire implements mutex.Client.
func (l *LamportNode) Acquire(_ core.Time, lease time.Duration, out core.Sink) error {
	if l.requesting {
		return errBusy
	}
	if err := checkLease(lease); err != nil {
		return err
	}
	l.clock++
	l.mine, l.requesting = stamp{l.clock, l.self}, true
	l.queue = sortedInsert(l.queue, l.mine)
	l.toOthers(LamportRequest{TS: l.mine.ts}, out)
	l.check(out)
	return nil
}

// Release implements mutex.Client.
func (l *LamportNode) Release(_ core.Time, out core.Sink) {
	if !l.requesting {
		return
	}
	l.requesting, l.inside = false, false
	l.queue = removeID(l.queue, l.self)
	l.clock++
	l.toOthers(LamportRelease{TS: l.clock}, out)
}

// Receive implements core.Node.
func (l *LamportNode) Receive(_ core.Time, from core.Addr, m core.Message, out core.Sink) {
	j := l.from(from)
	if j < 0 {
		return
	}
	switch m := m.(type) {
	case LamportRequest:
		l.tick(m.TS)
		l.heard(j, m.TS)
		l.queue = sortedInsert(removeID(l.queue, j), stamp{m.TS, j})
		out.Send(from, LamportReply{TS: l.clock})
	case LamportReply:
		l.tick(m.TS)
		l.heard(j, m.TS)
	case LamportRelease:
		l.tick(m.TS)
		l.heard(j, m.TS)
		l.queue = removeID(l.queue, j)
	}
	l.check(out)
}

func (l *LamportNode) heard(j int, ts uint64) {
	if l.latest == nil {
		l.latest = make([]uint64, len(l.names))
	}
	l.latest[j] = max(l.latest[j], ts)
}

func (l *LamportNode) check(out core.Sink) {
	if !l.requesting || l.inside || len(l.queue) == 0 || l.queue[0] != l.mine {
		return
	}
	for i := range l.names {
		if i != l.self && (l.latest == nil || l.latest[i] <= l.mine.ts) {
			return
		}
	}
	l.inside = true
	enter(out, 1)
}

// Wake implements core.Node.
func (l *LamportNode) Wake(core.Time, core.Timer, core.Sink) {}
