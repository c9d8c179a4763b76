package classic

import (
	"cmp"
	"errors"
	"math"
	"slices"
	"time"

	"github.com/dhtsync/dhtsync/core"
	"github.com/dhtsync/dhtsync/mutex"
)

// forever is the lease of an algorithm without leases: the holder stays inside
// until it releases.
const forever = core.Time(math.MaxInt64)

var errBusy = errors.New("classic: already requesting or inside")

// stamp is a Lamport timestamp with the process index breaking ties.
type stamp struct {
	ts uint64
	id int
}

func (a stamp) less(b stamp) bool {
	return cmp.Or(cmp.Compare(a.ts, b.ts), cmp.Compare(a.id, b.id)) < 0
}

// peers is the common state of an algorithm among N processes named by names.
type peers struct {
	self  int
	names []core.ClientID
	index map[core.ClientID]int
}

func newPeers(self int, names []core.ClientID) peers {
	index := make(map[core.ClientID]int, len(names))
	for i, n := range names {
		index[n] = i
	}
	return peers{self: self, names: names, index: index}
}

func (p *peers) ID() core.ClientID    { return p.names[p.self] }
func (p *peers) addr(i int) core.Addr { return core.ClientAddr(p.names[i]) }
func (p *peers) from(a core.Addr) int { return p.indexOf(a) }
func (p *peers) indexOf(a core.Addr) int {
	if i, ok := p.index[a.Client]; ok && !a.IsReplica() {
		return i
	}
	return -1
}

// toOthers sends m to every process but this one.
func (p *peers) toOthers(m core.Message, out core.Sink) {
	for i := range p.names {
		if i != p.self {
			out.Send(p.addr(i), m)
		}
	}
}

// checkLease refuses a lease: these algorithms have none.
func checkLease(lease time.Duration) error {
	if lease != 0 {
		return errors.New("classic: these algorithms have no leases")
	}
	return nil
}

func enter(out core.Sink, rounds int) { out.Emit(mutex.Acquired{Until: forever, Rounds: rounds}) }

// sortedInsert inserts s into q kept sorted by stamp.
func sortedInsert(q []stamp, s stamp) []stamp {
	i, _ := slices.BinarySearchFunc(q, s, func(a, b stamp) int {
		if a.less(b) {
			return -1
		}
		if b.less(a) {
			return 1
		}
		return 0
	})
	return slices.Insert(q, i, s)
}

func removeID(q []stamp, id int) []stamp {
	return slices.DeleteFunc(q, func(s stamp) bool { return s.id == id })
}
