package p2p

import (
	"sync"
	"time"

	"github.com/dhtsync/dhtsync/core"
)

// Now is the wall clock as the cores see it: Unix time in nanoseconds. Sigma's
// timestamps use the physical clock, so all peers must share this origin.
func Now() core.Time { return core.Time(time.Now().UnixNano()) }

// Outputs receives what a core asks of its runtime. Both methods are called
// with the runner's lock held, in the order the core produced them, and must
// not block (queue, don't wait).
type Outputs struct {
	Send func(to core.Addr, m core.Message)
	Emit func(e core.Event)
	// AfterStep, if set, runs after every step and before the step's sends
	// and events are released: the place to write the node's state to stable
	// storage ahead of anything that depends on it.
	AfterStep func()
}

// Runner drives one pure core with the wall clock: it serializes the core's
// steps (a message, a timer, or a call made through Do), arms its timers with
// time.AfterFunc, and hands its outputs on. A core is never touched
// concurrently, so the cores need no locks.
type Runner struct {
	mu     sync.Mutex
	node   core.Node
	out    Outputs
	timers map[*timerRef]struct{}
	closed bool
	buf    core.Recorder // the outputs of the step under way
}

// NewRunner returns a runner for node. If node is a [core.Starter] its Start
// runs now.
func NewRunner(node core.Node, out Outputs) *Runner {
	r := &Runner{node: node, out: out, timers: map[*timerRef]struct{}{}}
	if s, ok := node.(core.Starter); ok {
		r.Do(func(now core.Time, sink core.Sink) { s.Start(now, sink) })
	}
	return r
}

// Receive delivers a message to the core.
func (r *Runner) Receive(from core.Addr, m core.Message) {
	r.Do(func(now core.Time, sink core.Sink) { r.node.Receive(now, from, m, sink) })
}

// Do runs f as one step of the core, with the current time and the core's sink.
// It reports false if the runner is closed.
func (r *Runner) Do(f func(now core.Time, sink core.Sink)) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	f(Now(), &r.buf)
	r.release()
	return true
}

// timerRef lets a timer's callback find its own entry; it is filled in under
// the runner's lock, which the callback takes before reading it.
type timerRef struct{ t *time.Timer }

func (r *Runner) wake(ref *timerRef, timer core.Timer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.timers, ref)
	if r.closed {
		return
	}
	r.node.Wake(Now(), timer, &r.buf)
	r.release()
}

// release hands the step's outputs on; r.mu is held.
func (r *Runner) release() {
	if r.out.AfterStep != nil {
		r.out.AfterStep()
	}
	for _, a := range r.buf.Timers {
		ref, timer := &timerRef{}, a.Timer
		ref.t = time.AfterFunc(time.Duration(a.At-Now()), func() { r.wake(ref, timer) })
		r.timers[ref] = struct{}{}
	}
	for _, s := range r.buf.Sent {
		r.out.Send(s.To, s.Msg)
	}
	for _, e := range r.buf.Events {
		r.out.Emit(e)
	}
	r.buf.Reset()
}

// Close stops the core: pending timers are cancelled and later steps refused.
func (r *Runner) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	for ref := range r.timers {
		ref.t.Stop()
	}
	clear(r.timers)
}
