package backoff

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/dhtsync/dhtsync/core"
	"github.com/dhtsync/dhtsync/mutex"
	"github.com/dhtsync/dhtsync/quorum"
)

const (
	timerRound uint8 = 2 // client: the round had no quorum in time
	timerRetry uint8 = 3 // client: the backoff sleep is over
)

type clientState uint8

const (
	idle clientState = iota
	trying
	sleeping
	holding
)

// ErrBusy is returned by Acquire while the client contends or holds the lease.
var ErrBusy = errors.New("backoff: client is already contending or holding the lease")

// Client is the client side of the backoff mutex (Fig. 1a): contend().
type Client struct {
	cfg    Config
	quorum quorum.Threshold
	id     core.ClientID
	rng    *rand.Rand

	state   clientState
	round   uint64 // increases with every round this client ever sends
	attempt int    // failed rounds of the current acquisition (the paper's s)
	rounds  int    // rounds of the current acquisition
	lease   time.Duration
	sentAt  core.Time

	answered []bool
	free     []bool
	replies  int
	locked   int
	minHeld  time.Duration // the shortest Held among FREE replies
}

var _ mutex.Client = (*Client)(nil)

// NewClient returns a client with identity id that draws its backoff from rng.
func NewClient(cfg Config, id core.ClientID, rng *rand.Rand) (*Client, error) {
	cfg, q, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if id == "" {
		return nil, errors.New("backoff: client id must not be empty")
	}
	if rng == nil {
		return nil, errors.New("backoff: client needs a random source")
	}
	return &Client{cfg: cfg, quorum: q, id: id, rng: rng, answered: make([]bool, cfg.N), free: make([]bool, cfg.N)}, nil
}

// ID implements [mutex.Client].
func (c *Client) ID() core.ClientID { return c.id }

// Acquire implements [mutex.Client]: contend() for a lease of Δ = lease.
func (c *Client) Acquire(now core.Time, lease time.Duration, out core.Sink) error {
	if c.state != idle {
		return ErrBusy
	}
	if lease == 0 {
		lease = c.cfg.Lease
	}
	if lease <= 2*c.cfg.MaxDelay || lease > c.cfg.MaxLease {
		return fmt.Errorf("backoff: lease %v outside (2δ=%v, MaxLease=%v]", lease, 2*c.cfg.MaxDelay, c.cfg.MaxLease)
	}
	c.lease, c.attempt, c.rounds = lease, 0, 0
	c.startRound(now, out)
	return nil
}

// Release implements [mutex.Client].
func (c *Client) Release(now core.Time, out core.Sink) {
	if c.state == idle {
		return
	}
	if c.cfg.EarlyRelease && c.state != sleeping {
		c.releaseGrants(out)
	}
	c.state = idle
}

func (c *Client) startRound(now core.Time, out core.Sink) {
	c.state = trying
	c.round++
	c.rounds++
	c.sentAt = now
	clear(c.answered)
	clear(c.free)
	c.replies, c.locked, c.minHeld = 0, 0, -1
	for i := range c.cfg.N {
		out.Send(core.ReplicaAddr(i), Try{Round: c.round, Lease: c.lease})
	}
	out.SetTimer(now.Add(c.cfg.RoundTimeout), core.Timer{Kind: timerRound, Round: c.round})
}

// Receive implements [core.Node].
func (c *Client) Receive(now core.Time, from core.Addr, m core.Message, out core.Sink) {
	r, ok := m.(TryReply)
	if !ok || c.state != trying || r.Round != c.round || from.Replica < 0 || from.Replica >= c.cfg.N || c.answered[from.Replica] {
		return // not an answer to the round in progress, or a duplicate
	}
	if c.cfg.SafeMode && now.Sub(c.sentAt) > 2*c.cfg.MaxDelay {
		return // too old to prove anything about the servers' clocks (§5)
	}
	c.answered[from.Replica] = true
	c.replies++
	if !r.Free {
		c.locked++
	} else {
		c.free[from.Replica] = true
		if c.minHeld < 0 || r.Held < c.minHeld {
			c.minHeld = max(r.Held, 0)
		}
	}
	if !c.quorum.IsQuorum(c.replies) {
		return
	}
	// Every correct server that said FREE granted no earlier than sentAt+minHeld, so
	// no other client can win at it before that time plus Δ+2δ.
	anchor := c.sentAt.Add(c.minHeld)
	if c.cfg.AnchorAtReturn {
		anchor = now
	}
	if until := anchor.Add(c.lease); c.locked <= c.cfg.B && until > now {
		c.state = holding
		out.Emit(mutex.Acquired{Until: until, Rounds: c.rounds, Voters: c.freeFrom()})
		return
	}
	c.loseRound(now, out)
}

// freeFrom lists the servers that answered FREE in this round.
func (c *Client) freeFrom() []int {
	var v []int
	for i, f := range c.free {
		if f {
			v = append(v, i)
		}
	}
	return v
}

// Wake implements [core.Node].
func (c *Client) Wake(now core.Time, t core.Timer, out core.Sink) {
	if t.Round != c.round {
		return // a timer of an earlier round
	}
	switch {
	case t.Kind == timerRound && c.state == trying:
		c.loseRound(now, out)
	case t.Kind == timerRetry && c.state == sleeping:
		c.startRound(now, out)
	}
}

// loseRound backs off: sleep d drawn from the policy, then try again.
func (c *Client) loseRound(now core.Time, out core.Sink) {
	if c.cfg.EarlyRelease {
		c.releaseGrants(out)
	}
	c.attempt++
	base := c.lease + 4*c.cfg.MaxDelay
	d := base / 2 // Persistent: a fixed short pause, never a growing window
	if !c.cfg.Persistent {
		d = c.cfg.Policy.Delay(c.rng, c.attempt, base)
	}
	c.state = sleeping
	out.SetTimer(now.Add(d), core.Timer{Kind: timerRetry, Round: c.round})
}

// releaseGrants tells every server to forget a grant of the current round. Servers
// that did not grant it (or granted someone else since) ignore the message; all n
// are told because FREE answers may still be on their way.
func (c *Client) releaseGrants(out core.Sink) {
	for i := range c.cfg.N {
		out.Send(core.ReplicaAddr(i), Release{Round: c.round})
	}
}
