package classic

import (
	"time"

	"github.com/dhtsync/dhtsync/core"
)

// Token is the token of the ring.
type Token struct{}

// RingNode is a process of the token ring: whoever holds the token may enter;
// the token goes round even when nobody wants it.
type RingNode struct {
	peers
	want, inside, token bool
}

// Start implements core.Starter: process 0 starts with the token.
func (r *RingNode) Start(_ core.Time, out core.Sink) {
	if r.self == 0 {
		r.take(out)
	}
}

func (r *RingNode) take(out core.Sink) {
	r.token = true
	if r.want {
		r.inside = true
		enter(out, 1)
		return
	}
	r.pass(out)
}

func (r *RingNode) pass(out core.Sink) {
	r.token = false
	out.Send(r.addr((r.self+1)%len(r.names)), Token{})
}

// Acquire implements mutex.Client.
func (r *RingNode) Acquire(_ core.Time, lease time.Duration, out core.Sink) error {
	if r.want {
		return errBusy
	}
	if err := checkLease(lease); err != nil {
		return err
	}
	r.want = true
	return nil
}

// Release implements mutex.Client.
func (r *RingNode) Release(_ core.Time, out core.Sink) {
	r.want = false
	if r.inside {
		r.inside = false
		r.pass(out)
	}
}

// Receive implements core.Node.
func (r *RingNode) Receive(_ core.Time, _ core.Addr, m core.Message, out core.Sink) {
	if _, ok := m.(Token); ok {
		r.take(out)
	}
}

// Wake implements core.Node.
func (r *RingNode) Wake(core.Time, core.Timer, core.Sink) {}
