package classic

import (
	"time"

	"github.com/dhtsync/dhtsync/core"
)

// Messages of Ricart–Agrawala: request and reply (2(N-1) per entry).
type (
	RARequest struct{ TS uint64 }
	RAReply   struct{}
)

// RANode replies to a request at once unless it is inside or its own request is
// earlier; those replies wait until it leaves.
type RANode struct {
	peers
	clock      uint64
	mine       stamp
	requesting bool
	inside     bool
	replies    int
	deferred   []int
}

// Acquire implements mutex.Client.
func (r *RANode) Acquire(_ core.Time, lease time.Duration, out core.Sink) error {
	if r.requesting {
		return errBusy
	}
	if err := checkLease(lease); err != nil {
		return err
	}
	r.clock++
	r.mine, r.requesting, r.replies = stamp{r.clock, r.self}, true, 0
	r.toOthers(RARequest{TS: r.mine.ts}, out)
	r.check(out)
	return nil
}

// Release implements mutex.Client.
func (r *RANode) Release(_ core.Time, out core.Sink) {
	if !r.requesting {
		return
	}
	r.requesting, r.inside = false, false
	for _, j := range r.deferred {
		out.Send(r.addr(j), RAReply{})
	}
	r.deferred = r.deferred[:0]
}

// Receive implements core.Node.
func (r *RANode) Receive(_ core.Time, from core.Addr, m core.Message, out core.Sink) {
	j := r.from(from)
	if j < 0 {
		return
	}
	switch m := m.(type) {
	case RARequest:
		r.clock = max(r.clock, m.TS) + 1
		if r.inside || (r.requesting && r.mine.less(stamp{m.TS, j})) {
			r.deferred = append(r.deferred, j)
			return
		}
		out.Send(from, RAReply{})
	case RAReply:
		if r.requesting {
			r.replies++
			r.check(out)
		}
	}
}

func (r *RANode) check(out core.Sink) {
	if r.requesting && !r.inside && r.replies == len(r.names)-1 {
		r.inside = true
		enter(out, 1)
	}
}

// Wake implements core.Node.
func (r *RANode) Wake(core.Time, core.Timer, core.Sink) {}
