package sigma

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/dhtsync/dhtsync/core"
	"github.com/dhtsync/dhtsync/mutex"
)

const (
	timerRetry uint8 = 10 // client: informed backoff ran out, ask again
	timerRenew uint8 = 11 // client: renew the lease
)

type clientState uint8

const (
	idle clientState = iota
	contending
	holding
)

// ErrBusy is returned by Acquire while the client contends or holds the lease.
var ErrBusy = errors.New("sigma: client is already contending or holding the lease")

// view is what a client last heard from one replica about its request.
type view struct {
	known       bool
	incarnation uint64
	version     uint64
	owner       core.ClientID
	ownerTS     uint64
	// validUntil is, when this client is owner, a lower bound of the replica's
	// lease expiry on the client's clock.
	validUntil core.Time
	heardAt    core.Time
	// askAt is when to ask this replica again (informed backoff): its wait hint
	// after its last answer, or RetryTimeout after a request it did not answer.
	askAt core.Time
	// yieldSeq is the Seq of a Yield sent to this replica and not yet answered.
	// Until an answer to it (or to a later message) arrives, older answers may
	// still name this client owner of a vote it gave away, so none is believed.
	yieldSeq uint64
}

type sent struct {
	seq uint64
	at  core.Time
}

// Client is the client side of Sigma.
type Client struct {
	cfg Config
	id  core.ClientID
	// skew is added to the physical time read into timestamps (a simulated clock
	// error; 0 on real peers).
	skew time.Duration

	state  clientState
	clock  uint64 // Lamport clock
	ts     uint64 // timestamp of the current request
	views  []view
	seq    uint64
	recent [8]sent // send times of the last broadcasts, by seq
	rounds int
	until  core.Time // the lease end told to the application
	// departed holds owners that some replica has reported replaced since this
	// client last heard of them: their other votes are probably gone too (a
	// release reaches every replica), so they do not count as a standing claim
	// when deciding whether to yield.
	departed map[core.ClientID]bool
	// confirmSince is set while a split vote is being confirmed: views heard
	// before it may be stale and are asked again before the client yields.
	confirmSince core.Time
	confirming   bool

	retryArmed core.Time // when the pending retry timer fires (0: none)
}

var _ mutex.Client = (*Client)(nil)

// NewClient returns a Sigma client with identity id.
func NewClient(cfg Config, id core.ClientID) (*Client, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if id == "" {
		return nil, errors.New("sigma: client id must not be empty")
	}
	return &Client{cfg: cfg, id: id, views: make([]view, cfg.N), departed: make(map[core.ClientID]bool)}, nil
}

// SetClockSkew makes the client's physical clock read d off true time, for
// simulating imperfectly synchronized peers. It changes only request order.
func (c *Client) SetClockSkew(d time.Duration) { c.skew = d }

// timestamp is a hybrid logical clock: Lamport's clock, never behind the
// physical clock in microseconds. A client that never heard from the replicas
// (its Lamport clock is 0) thus still queues behind requests made before it,
// which keeps queues consistent and service close to first come, first served.
func (c *Client) timestamp(now core.Time) uint64 {
	physical := uint64(max(int64(now.Add(c.skew))/int64(time.Microsecond), 0))
	return max(c.clock+1, physical)
}

// ID implements [mutex.Client].
func (c *Client) ID() core.ClientID { return c.id }

// Acquire implements [mutex.Client]. Sigma's lease is the deployment's and is
// renewed while held, so lease must be 0 or equal to Config.Lease.
func (c *Client) Acquire(now core.Time, lease time.Duration, out core.Sink) error {
	if c.state != idle {
		return ErrBusy
	}
	if lease != 0 && lease != c.cfg.Lease {
		return fmt.Errorf("sigma: per-call lease %v not supported; the deployment's lease is %v and is renewed while held", lease, c.cfg.Lease)
	}
	c.ts = c.timestamp(now)
	c.clock = c.ts
	c.state, c.rounds, c.until = contending, 0, 0
	clear(c.views)
	clear(c.departed)
	c.confirming = false
	c.retryArmed = 0
	c.broadcast(now, out, func(i int) bool { return true })
	// Votes won while waiting for the others are leases too: keep them alive.
	out.SetTimer(now.Add(c.cfg.RenewEvery), core.Timer{Kind: timerRenew, Round: c.ts})
	return nil
}

// Release implements [mutex.Client]: leave the critical section or give up
// contending. Every replica is told, so queued copies of the request go too.
func (c *Client) Release(now core.Time, out core.Sink) {
	if c.state == idle {
		return
	}
	for i := range c.cfg.N {
		out.Send(core.ReplicaAddr(i), Release{TS: c.ts})
	}
	c.state = idle
}

// broadcast sends the request to the replicas selected by to, each of which is
// asked again after RetryTimeout unless it answers.
func (c *Client) broadcast(now core.Time, out core.Sink, to func(i int) bool) {
	c.seq++
	c.recent[c.seq%uint64(len(c.recent))] = sent{c.seq, now}
	c.rounds++
	for i := range c.cfg.N {
		if to(i) {
			out.Send(core.ReplicaAddr(i), Request{TS: c.ts, Seq: c.seq})
			c.views[i].askAt = now.Add(c.cfg.RetryTimeout)
		}
	}
	c.armRetry(out)
}

// sentAt is when broadcast seq left, if it is recent enough to be remembered.
func (c *Client) sentAt(seq uint64) (core.Time, bool) {
	s := c.recent[seq%uint64(len(c.recent))]
	return s.at, seq != 0 && s.seq == seq
}

// armRetry makes sure a timer fires by the earliest askAt. One timer is pending
// at a time; one that fires early re-arms for the current earliest.
func (c *Client) armRetry(out core.Sink) {
	at := core.Time(0)
	for _, v := range c.views {
		if v.askAt != 0 && (at == 0 || v.askAt < at) {
			at = v.askAt
		}
	}
	if at != 0 && (c.retryArmed == 0 || at < c.retryArmed) {
		c.retryArmed = at
		out.SetTimer(at, core.Timer{Kind: timerRetry, Round: c.ts})
	}
}

// Receive implements [core.Node].
func (c *Client) Receive(now core.Time, from core.Addr, m core.Message, out core.Sink) {
	r, ok := m.(Response)
	i := from.Replica
	if !ok || c.state == idle || r.ClientTS != c.ts || i < 0 || i >= c.cfg.N {
		return
	}
	v := &c.views[i]
	if v.yieldSeq != 0 && r.Seq < v.yieldSeq {
		return // may predate our yield
	}
	if v.known && v.incarnation == r.Incarnation && r.Version <= v.version {
		return // reordered: an older view than the one we have
	}
	c.clock = max(c.clock, r.OwnerTS, r.Clock)
	if v.known && v.owner != "" && v.owner != r.Owner {
		c.departed[v.owner] = true
	}
	if r.Owner != "" {
		delete(c.departed, r.Owner) // news of it holding this vote now
	}
	*v = view{known: true, incarnation: r.Incarnation, version: r.Version, owner: r.Owner, ownerTS: r.OwnerTS, heardAt: now,
		askAt: now.Add(min(max(r.WaitHint, c.cfg.RetryTimeout), c.cfg.MaxWait))}
	if r.Owner == c.id && r.OwnerTS == c.ts {
		// The replica's lease ends LeaseLeft after it sent this. It sent it after
		// our message seq left, or, if pushed to us, at most δ before it arrived.
		anchor, ok := c.sentAt(r.Seq)
		if !ok {
			anchor = now.Add(-c.cfg.MaxDelay)
		}
		v.validUntil = anchor.Add(r.LeaseLeft)
		v.askAt = v.validUntil // renewals keep it; if they fail, ask again when it lapses
	} else if c.state == contending {
		c.armRetry(out) // informed backoff: ask this replica again after its hint
	}
	switch c.state {
	case contending:
		c.evaluate(now, out)
	case holding:
		c.extend(now, out)
	}
}

// evaluate decides, after a new answer, whether the client won, must wait, or
// must yield because nobody can reach m.
func (c *Client) evaluate(now core.Time, out core.Sink) {
	if c.validVotes(now) >= c.cfg.M {
		if until := c.leaseEnd(now); until > now {
			c.state, c.until = holding, until
			out.Emit(mutex.Acquired{Until: until, Rounds: c.rounds, Voters: c.voters(now)})
			return
		}
	}
	unknown := 0
	counts := make(map[core.ClientID]int, 4)
	for _, v := range c.views {
		if !v.known || v.owner == "" || c.departed[v.owner] {
			unknown++
		} else {
			counts[v.owner]++
		}
	}
	for _, k := range counts {
		if k+unknown >= c.cfg.M {
			c.confirming = false
			return // someone (perhaps us) can still win: wait
		}
	}
	// Nobody can reach m. Views of other owners may be stale (a push tells us
	// of our own new votes, not of others'), so first ask those replicas again;
	// yield only if the split survives answers given after it was seen.
	if !c.confirming {
		c.confirming, c.confirmSince = true, now
		c.broadcast(now, out, func(i int) bool { return !c.holdsVote(i, now) })
		return
	}
	for i, v := range c.views {
		if !c.holdsVote(i, now) && v.heardAt < c.confirmSince {
			return // still waiting for a fresh answer
		}
	}
	// Split vote: give back ours so the replicas can converge on the earliest.
	c.confirming = false
	c.seq++
	for i := range c.views {
		if v := &c.views[i]; v.known && v.owner == c.id {
			out.Send(core.ReplicaAddr(i), Yield{TS: c.ts, Seq: c.seq})
			// Ask again if the answer to the yield is lost.
			*v = view{incarnation: v.incarnation, version: v.version, yieldSeq: c.seq, askAt: now.Add(c.cfg.RetryTimeout)}
		}
	}
	c.armRetry(out)
}

// holdsVote reports whether replica i's vote for this request still lasts.
func (c *Client) holdsVote(i int, now core.Time) bool {
	v := c.views[i]
	return v.known && v.owner == c.id && v.ownerTS == c.ts && v.validUntil > now
}

// voters lists the replicas whose vote for this request still lasts.
func (c *Client) voters(now core.Time) []int {
	var v []int
	for i := range c.views {
		if c.holdsVote(i, now) {
			v = append(v, i)
		}
	}
	return v
}

// validVotes counts the replicas whose vote for this request still lasts.
func (c *Client) validVotes(now core.Time) int {
	k := 0
	for i := range c.views {
		if c.holdsVote(i, now) {
			k++
		}
	}
	return k
}

// leaseEnd is the last moment at which at least n-m+1 votes are still valid: until
// then no other client can hold m.
func (c *Client) leaseEnd(now core.Time) core.Time {
	var ends []core.Time
	for i, v := range c.views {
		if c.holdsVote(i, now) {
			ends = append(ends, v.validUntil)
		}
	}
	need := c.cfg.N - c.cfg.M + 1
	if len(ends) < need {
		return now
	}
	slices.Sort(ends)
	return ends[len(ends)-need]
}

// extend tells the application when renewals pushed the lease end further.
func (c *Client) extend(now core.Time, out core.Sink) {
	if until := c.leaseEnd(now); until > c.until {
		c.until = until
		out.Emit(mutex.Extended{Until: until})
	}
}

// Wake implements [core.Node].
func (c *Client) Wake(now core.Time, t core.Timer, out core.Sink) {
	if t.Round != c.ts {
		return
	}
	switch {
	case t.Kind == timerRetry && c.state == contending:
		c.retryArmed = 0
		// Ask again the replicas whose hint ran out and that hold no valid vote
		// for us: this also rebuilds the queue of a replica that reset.
		due := func(i int) bool { v := c.views[i]; return v.askAt != 0 && v.askAt <= now && !c.holdsVote(i, now) }
		for i := range c.views {
			if due(i) {
				c.broadcast(now, out, due)
				break
			}
		}
		c.armRetry(out)
	case t.Kind == timerRetry:
		c.retryArmed = 0
	case t.Kind == timerRenew && c.state != idle:
		c.seq++
		c.recent[c.seq%uint64(len(c.recent))] = sent{c.seq, now}
		for i := range c.views {
			if c.holdsVote(i, now) {
				out.Send(core.ReplicaAddr(i), Renew{TS: c.ts, Seq: c.seq})
			}
		}
		out.SetTimer(now.Add(c.cfg.RenewEvery), core.Timer{Kind: timerRenew, Round: c.ts})
	}
}
