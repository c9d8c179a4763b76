package strawman

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/dhtsync/dhtsync/core"
	"github.com/dhtsync/dhtsync/mutex"
)

// Config is one strawman deployment.
type Config struct {
	N, M int // replicas, votes needed (N/2 < M ≤ N)
	// Lease is how long a vote lasts.
	Lease time.Duration
	// MaxDelay is δ; a round without a decision after RoundTimeout (0: 4δ) is lost.
	MaxDelay     time.Duration
	RoundTimeout time.Duration
	// Backoff is the window of the uniformly random retry delay (0: 4δ).
	Backoff time.Duration
	// Grace: a new replica incarnation votes for nobody for one Lease.
	Grace bool
}

func (c Config) withDefaults() (Config, error) {
	switch {
	case c.N < 1 || 2*c.M <= c.N || c.M > c.N:
		return c, fmt.Errorf("strawman: m=%d votes of n=%d replicas: need n ≥ 1 and n/2 < m ≤ n", c.M, c.N)
	case c.Lease <= 2*c.MaxDelay:
		return c, fmt.Errorf("strawman: lease %v must exceed the round trip 2δ=%v", c.Lease, 2*c.MaxDelay)
	case c.MaxDelay < 0 || c.RoundTimeout < 0 || c.Backoff < 0:
		return c, errors.New("strawman: durations cannot be negative")
	}
	if c.RoundTimeout == 0 {
		c.RoundTimeout = max(4*c.MaxDelay, time.Millisecond)
	}
	if c.Backoff == 0 {
		c.Backoff = max(4*c.MaxDelay, time.Millisecond)
	}
	return c, nil
}

// Validate reports whether c describes a possible deployment.
func (c Config) Validate() error {
	_, err := c.withDefaults()
	return err
}

// Request asks for a vote in round Round.
type Request struct{ Round uint64 }

// Vote answers a Request: granted, or refused naming the owner.
type Vote struct {
	Round   uint64
	Granted bool
	Owner   core.ClientID
}

// Release gives back the vote of Round.
type Release struct{ Round uint64 }

// Replica is one strawman replica.
type Replica struct {
	cfg        Config
	owner      core.ClientID
	ownerRound uint64
	expiry     core.Time
	// finished ignores late copies of requests whose round was given back; without
	// it a loser's delayed request would hold the vote for a whole lease.
	finished mutex.Finished
}

// NewReplica returns a replica whose incarnation starts at now.
func NewReplica(cfg Config, now core.Time) (*Replica, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	r := &Replica{cfg: cfg, finished: mutex.Finished{Max: 4096}}
	if cfg.Grace {
		r.expiry = now.Add(cfg.Lease) // owned by nobody, granted to nobody
	}
	return r, nil
}

// Receive implements [core.Node].
func (r *Replica) Receive(now core.Time, from core.Addr, m core.Message, out core.Sink) {
	if from.IsReplica() || from.Client == "" {
		return
	}
	switch m := m.(type) {
	case Request:
		if r.finished.Stale(from.Client, m.Round) {
			return
		}
		free := now >= r.expiry || (r.owner == from.Client && r.owner != "")
		if free {
			r.owner, r.ownerRound, r.expiry = from.Client, m.Round, now.Add(r.cfg.Lease)
		}
		out.Send(from, Vote{Round: m.Round, Granted: free, Owner: r.owner})
	case Release:
		r.finished.Done(now, from.Client, m.Round)
		if r.owner == from.Client && r.ownerRound == m.Round {
			r.owner, r.expiry = "", now
		}
	}
}

// Wake implements [core.Node]; the replica arms no timers.
func (r *Replica) Wake(core.Time, core.Timer, core.Sink) {}

const (
	timerRound uint8 = 1
	timerRetry uint8 = 2
)

// Client is a strawman client.
type Client struct {
	cfg Config
	id  core.ClientID
	rng *rand.Rand

	active   bool // contending or holding
	holding  bool
	waiting  bool // in backoff
	round    uint64
	rounds   int
	sentAt   core.Time
	answered []bool
	granted  []bool
	yes, no  int
}

var _ mutex.Client = (*Client)(nil)

// NewClient returns a strawman client.
func NewClient(cfg Config, id core.ClientID, rng *rand.Rand) (*Client, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if id == "" || rng == nil {
		return nil, errors.New("strawman: client needs an id and a random source")
	}
	return &Client{cfg: cfg, id: id, rng: rng, answered: make([]bool, cfg.N), granted: make([]bool, cfg.N)}, nil
}

// ID implements [mutex.Client].
func (c *Client) ID() core.ClientID { return c.id }

// Acquire implements [mutex.Client]; the lease is the deployment's (lease must be
// 0 or equal to it).
func (c *Client) Acquire(now core.Time, lease time.Duration, out core.Sink) error {
	if c.active {
		return errors.New("strawman: client is already contending or holding")
	}
	if lease != 0 && lease != c.cfg.Lease {
		return fmt.Errorf("strawman: per-call lease %v not supported (deployment lease %v)", lease, c.cfg.Lease)
	}
	c.active, c.rounds = true, 0
	c.startRound(now, out)
	return nil
}

func (c *Client) startRound(now core.Time, out core.Sink) {
	c.round++
	c.rounds++
	c.waiting, c.sentAt, c.yes, c.no = false, now, 0, 0
	clear(c.answered)
	clear(c.granted)
	for i := range c.cfg.N {
		out.Send(core.ReplicaAddr(i), Request{Round: c.round})
	}
	out.SetTimer(now.Add(c.cfg.RoundTimeout), core.Timer{Kind: timerRound, Round: c.round})
}

// Receive implements [core.Node].
func (c *Client) Receive(now core.Time, from core.Addr, m core.Message, out core.Sink) {
	v, ok := m.(Vote)
	i := from.Replica
	if !ok || !c.active || c.holding || c.waiting || v.Round != c.round || i < 0 || i >= c.cfg.N || c.answered[i] {
		return
	}
	c.answered[i] = true
	if v.Granted {
		c.granted[i] = true
		c.yes++
	} else {
		c.no++
	}
	switch {
	case c.yes >= c.cfg.M:
		if until := c.sentAt.Add(c.cfg.Lease); until > now {
			c.holding = true
			var voters []int
			for i, g := range c.granted {
				if g {
					voters = append(voters, i)
				}
			}
			out.Emit(mutex.Acquired{Until: until, Rounds: c.rounds, Voters: voters})
			return
		}
		c.lose(now, out)
	case c.no > c.cfg.N-c.cfg.M:
		c.lose(now, out) // m is out of reach
	}
}

// lose gives the votes back and retries after a random backoff.
func (c *Client) lose(now core.Time, out core.Sink) {
	c.giveBack(out)
	c.waiting = true
	d := time.Duration(c.rng.Int64N(int64(c.cfg.Backoff) + 1))
	out.SetTimer(now.Add(d), core.Timer{Kind: timerRetry, Round: c.round})
}

// giveBack releases the votes of this round, including those not answered yet.
func (c *Client) giveBack(out core.Sink) {
	for i := range c.cfg.N {
		if c.granted[i] || !c.answered[i] {
			out.Send(core.ReplicaAddr(i), Release{Round: c.round})
		}
	}
}

// Wake implements [core.Node].
func (c *Client) Wake(now core.Time, t core.Timer, out core.Sink) {
	if !c.active || c.holding || t.Round != c.round {
		return
	}
	switch {
	case t.Kind == timerRound && !c.waiting:
		c.lose(now, out)
	case t.Kind == timerRetry && c.waiting:
		c.startRound(now, out)
	}
}

// Release implements [mutex.Client].
func (c *Client) Release(now core.Time, out core.Sink) {
	if !c.active {
		return
	}
	if !c.waiting {
		c.giveBack(out)
	}
	c.active, c.holding, c.waiting = false, false, false
}
