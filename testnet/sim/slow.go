package sim

import (
	"time"

	"github.com/dhtsync/dhtsync/core"
)

// timerSlowFlush is a timer kind reserved by slowNode; protocol cores use small
// kinds, so the wrapper can tell its own timers apart.
const timerSlowFlush uint8 = 255

// slowNode wraps a correct node and sends each of its messages `by` late: the
// "slow" Byzantine behaviour, which also models an overloaded peer.
type slowNode struct {
	inner   core.Node
	by      time.Duration
	pending []heldMessage
	next    uint64
	capture captureSink
}

type heldMessage struct {
	id uint64
	to core.Addr
	m  core.Message
}

type captureSink struct {
	s   *slowNode
	out core.Sink
	now core.Time
}

func (c *captureSink) Send(to core.Addr, m core.Message) {
	c.s.next++
	c.s.pending = append(c.s.pending, heldMessage{c.s.next, to, m})
	c.out.SetTimer(c.now.Add(c.s.by), core.Timer{Kind: timerSlowFlush, Round: c.s.next})
}
func (c *captureSink) SetTimer(at core.Time, t core.Timer) { c.out.SetTimer(at, t) }
func (c *captureSink) Emit(e core.Event)                   { c.out.Emit(e) }

func newSlowNode(inner core.Node, by time.Duration) *slowNode {
	s := &slowNode{inner: inner, by: by}
	s.capture.s = s
	return s
}

func (s *slowNode) Start(now core.Time, out core.Sink) {
	if st, ok := s.inner.(core.Starter); ok {
		s.capture.out, s.capture.now = out, now
		st.Start(now, &s.capture)
	}
}

func (s *slowNode) Receive(now core.Time, from core.Addr, m core.Message, out core.Sink) {
	s.capture.out, s.capture.now = out, now
	s.inner.Receive(now, from, m, &s.capture)
}

func (s *slowNode) Wake(now core.Time, t core.Timer, out core.Sink) {
	if t.Kind != timerSlowFlush {
		s.capture.out, s.capture.now = out, now
		s.inner.Wake(now, t, &s.capture)
		return
	}
	// Messages are held for the same time, so they leave in the order they came.
	for len(s.pending) > 0 && s.pending[0].id <= t.Round {
		out.Send(s.pending[0].to, s.pending[0].m)
		s.pending = s.pending[1:]
	}
}
