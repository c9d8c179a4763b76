package classic

import (
	"slices"
	"time"

	"github.com/dhtsync/dhtsync/core"
)

// Messages of Maekawa's algorithm. Request, Vote and Release are the slides'
// algorithm (about 3√N per entry); Failed, Inquire and Relinquish are the fix
// that makes it deadlock-free (Sanders): requests carry timestamps, and a voter
// that voted for a later request asks for its vote back when an earlier one
// comes.
type (
	MaekawaRequest    struct{ TS uint64 }
	MaekawaVote       struct{}
	MaekawaRelease    struct{}
	MaekawaFailed     struct{}
	MaekawaInquire    struct{}
	MaekawaRelinquish struct{}
)

// GridSets are Maekawa's voting sets on a ⌈√N⌉-wide grid: process i votes with
// its row and its column. Any row meets any column, so any two sets intersect.
func GridSets(n int) [][]int {
	k := 1
	for k*k < n {
		k++
	}
	sets := make([][]int, n)
	for i := range n {
		row, col := i/k, i%k
		for j := range n {
			if j/k == row || j%k == col {
				sets[i] = append(sets[i], j)
			}
		}
	}
	return sets
}

// MaekawaNode is a requester (it needs the vote of every process of its voting
// set) and a voter (it votes for one request at a time).
type MaekawaNode struct {
	peers
	set []int // my voting set
	fix bool

	clock uint64
	// requester
	requesting, inside, failed bool
	mine                       stamp
	votes                      map[int]bool // voters whose vote I hold
	inquirers                  []int        // voters that asked for their vote back
	// voter
	voted    bool
	votedFor stamp
	inquired bool
	waiting  []stamp // requests waiting for my vote (by stamp with the fix, FIFO without)
}

// send delivers m to process j, to itself without the network.
func (n *MaekawaNode) send(j int, m core.Message, out core.Sink) {
	if j == n.self {
		n.handle(j, m, out)
		return
	}
	out.Send(n.addr(j), m)
}

// Acquire implements mutex.Client.
func (n *MaekawaNode) Acquire(_ core.Time, lease time.Duration, out core.Sink) error {
	if n.requesting {
		return errBusy
	}
	if err := checkLease(lease); err != nil {
		return err
	}
	n.clock++
	n.mine, n.requesting, n.failed = stamp{n.clock, n.self}, true, false
	n.votes, n.inquirers = make(map[int]bool, len(n.set)), nil
	for _, j := range n.set {
		n.send(j, MaekawaRequest{TS: n.mine.ts}, out)
	}
	return nil
}

// Release implements mutex.Client.
func (n *MaekawaNode) Release(_ core.Time, out core.Sink) {
	if !n.requesting {
		return
	}
	n.requesting, n.inside = false, false
	for _, j := range n.set {
		n.send(j, MaekawaRelease{}, out)
	}
}

// Receive implements core.Node.
func (n *MaekawaNode) Receive(_ core.Time, from core.Addr, m core.Message, out core.Sink) {
	if j := n.from(from); j >= 0 {
		n.handle(j, m, out)
	}
}

func (n *MaekawaNode) handle(j int, m core.Message, out core.Sink) {
	switch m := m.(type) {
	// Voter side.
	case MaekawaRequest:
		n.clock = max(n.clock, m.TS) + 1
		n.request(stamp{m.TS, j}, out)
	case MaekawaRelease:
		if n.voted && n.votedFor.id == j {
			n.voted, n.inquired = false, false
			n.voteNext(out)
		}
	case MaekawaRelinquish:
		if n.voted && n.votedFor.id == j {
			n.waiting = sortedInsert(n.waiting, n.votedFor)
			n.voted, n.inquired = false, false
			n.voteNext(out)
		}
	// Requester side.
	case MaekawaVote:
		if !n.requesting {
			return
		}
		n.votes[j] = true
		if !n.inside && len(n.votes) == len(n.set) {
			n.inside, n.inquirers = true, nil
			enter(out, 1)
		}
	case MaekawaFailed:
		if n.requesting && !n.inside {
			n.failed = true
			n.relinquish(out)
		}
	case MaekawaInquire:
		if !n.requesting || n.inside || !n.votes[j] {
			return // inside: the release answers it
		}
		n.inquirers = append(n.inquirers, j)
		if n.failed {
			n.relinquish(out)
		}
	}
}

// request handles a request for my vote.
func (n *MaekawaNode) request(s stamp, out core.Sink) {
	if !n.voted {
		n.vote(s, out)
		return
	}
	if !n.fix {
		n.waiting = append(n.waiting, s) // the slides: queue it, first come first served
		return
	}
	n.waiting = sortedInsert(n.waiting, s)
	if s.less(n.votedFor) && n.waiting[0] == s {
		if len(n.waiting) > 1 {
			// The request it displaces at the head cannot get my vote soon either.
			n.send(n.waiting[1].id, MaekawaFailed{}, out)
		}
		if !n.inquired {
			n.inquired = true
			n.send(n.votedFor.id, MaekawaInquire{}, out)
		}
		return
	}
	n.send(s.id, MaekawaFailed{}, out)
}

func (n *MaekawaNode) vote(s stamp, out core.Sink) {
	n.voted, n.votedFor = true, s
	n.send(s.id, MaekawaVote{}, out)
}

func (n *MaekawaNode) voteNext(out core.Sink) {
	if len(n.waiting) == 0 {
		return
	}
	next := n.waiting[0]
	n.waiting = n.waiting[1:]
	n.vote(next, out)
}

// relinquish gives back the votes of the voters that asked for them.
func (n *MaekawaNode) relinquish(out core.Sink) {
	for _, j := range n.inquirers {
		if n.votes[j] {
			delete(n.votes, j)
			n.send(j, MaekawaRelinquish{}, out)
		}
	}
	n.inquirers = slices.Delete(n.inquirers, 0, len(n.inquirers))
}

// Wake implements core.Node.
func (n *MaekawaNode) Wake(core.Time, core.Timer, core.Sink) {}
