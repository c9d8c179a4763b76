package classic

import (
	"time"

	"github.com/dhtsync/dhtsync/core"
)

// Messages of the centralized algorithm: request, grant, release (3 per entry).
type (
	CentralRequest struct{}
	CentralGrant   struct{}
	CentralRelease struct{}
)

// CentralServer is the lock server: it grants to one client at a time and
// queues the others first come, first served.
type CentralServer struct {
	holder core.ClientID
	queue  []core.ClientID
}

// Receive implements core.Node.
func (s *CentralServer) Receive(_ core.Time, from core.Addr, m core.Message, out core.Sink) {
	switch m.(type) {
	case CentralRequest:
		if s.holder == "" {
			s.holder = from.Client
			out.Send(from, CentralGrant{})
			return
		}
		s.queue = append(s.queue, from.Client)
	case CentralRelease:
		if s.holder != from.Client {
			return
		}
		s.holder = ""
		if len(s.queue) > 0 {
			s.holder, s.queue = s.queue[0], s.queue[1:]
			out.Send(core.ClientAddr(s.holder), CentralGrant{})
		}
	}
}

// Wake implements core.Node.
func (s *CentralServer) Wake(core.Time, core.Timer, core.Sink) {}

// CentralClient asks the server.
type CentralClient struct {
	id     core.ClientID
	active bool
}

// ID implements mutex.Client.
func (c *CentralClient) ID() core.ClientID { return c.id }

// Acquire implements mutex.Client.
func (c *CentralClient) Acquire(_ core.Time, lease time.Duration, out core.Sink) error {
	if c.active {
		return errBusy
	}
	if err := checkLease(lease); err != nil {
		return err
	}
	c.active = true
	out.Send(core.ReplicaAddr(0), CentralRequest{})
	return nil
}

// Release implements mutex.Client.
func (c *CentralClient) Release(_ core.Time, out core.Sink) {
	if c.active {
		c.active = false
		out.Send(core.ReplicaAddr(0), CentralRelease{})
	}
}

// Receive implements core.Node.
func (c *CentralClient) Receive(_ core.Time, _ core.Addr, m core.Message, out core.Sink) {
	if _, ok := m.(CentralGrant); ok && c.active {
		enter(out, 1)
	}
}

// Wake implements core.Node.
func (c *CentralClient) Wake(core.Time, core.Timer, core.Sink) {}
