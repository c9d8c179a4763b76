package sigma

import (
	"cmp"
	"slices"

	"github.com/dhtsync/dhtsync/core"
)

// waitQueue is a replica's queue of waiting requests, ordered by timestamp then
// client id, holding at most one request per client. Lookups are by binary
// search: under saturation a queue holds thousands of requests and every message
// asks for a position.
type waitQueue struct {
	sorted []request
	ts     map[core.ClientID]uint64 // the queued request of each client
}

func compareRequests(a, b request) int {
	return cmp.Or(cmp.Compare(a.ts, b.ts), cmp.Compare(a.client, b.client))
}

func (q *waitQueue) Len() int { return len(q.sorted) }

// Insert queues req, replacing an older request of the same client.
func (q *waitQueue) Insert(req request) {
	q.Remove(req.client)
	if q.ts == nil {
		q.ts = make(map[core.ClientID]uint64)
	}
	i, _ := slices.BinarySearchFunc(q.sorted, req, compareRequests)
	q.sorted = slices.Insert(q.sorted, i, req)
	q.ts[req.client] = req.ts
}

// Remove drops the queued request of client c, if any.
func (q *waitQueue) Remove(c core.ClientID) {
	if ts, ok := q.ts[c]; ok {
		q.removeExact(request{c, ts})
	}
}

// RemoveRequest drops req if it is the one queued.
func (q *waitQueue) RemoveRequest(req request) {
	if ts, ok := q.ts[req.client]; ok && ts == req.ts {
		q.removeExact(req)
	}
}

func (q *waitQueue) removeExact(req request) {
	if i, found := slices.BinarySearchFunc(q.sorted, req, compareRequests); found {
		q.sorted = slices.Delete(q.sorted, i, i+1)
	}
	delete(q.ts, req.client)
}

// Position is req's 1-based place in the queue, or 0 if it is not queued.
func (q *waitQueue) Position(req request) int {
	if ts, ok := q.ts[req.client]; !ok || ts != req.ts {
		return 0
	}
	i, _ := slices.BinarySearchFunc(q.sorted, req, compareRequests)
	return i + 1
}

// PopHead removes and returns the earliest request.
func (q *waitQueue) PopHead() (request, bool) {
	if len(q.sorted) == 0 {
		return request{}, false
	}
	head := q.sorted[0]
	q.removeExact(head)
	return head, true
}
