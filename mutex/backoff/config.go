package backoff

import (
	"errors"
	"fmt"
	"time"

	"github.com/dhtsync/dhtsync/quorum"
)

// Config is one deployment of the backoff mutex. Clients and servers of a resource
// must agree on N, B, MaxLease, MaxDelay, DelayedReplies; the other fields are a
// client's own choices and are ignored by servers.
type Config struct {
	N int // servers (replicas)
	B int // Byzantine servers tolerated; needs N ≥ 5B+1

	// Lease is Δ for an Acquire that does not name one.
	Lease time.Duration
	// MaxLease bounds the per-call Δ; servers refuse longer ones, and the grace
	// period lasts MaxLease. 0 means Lease.
	MaxLease time.Duration
	// MaxDelay is δ, the bound on one-way message delay in synchronous periods.
	MaxDelay time.Duration

	// Policy draws backoff sleeps; nil means [Exponential].
	Policy Policy
	// RoundTimeout abandons a round that has no quorum of replies; 0 means 4δ
	// (MaxLease+6δ with DelayedReplies, since replies may be held for a lease;
	// Lease when δ is 0). In SafeMode replies older than 2δ are ignored, so a round
	// is abandoned after 2δ.
	RoundTimeout time.Duration
	// MaxDelayed bounds a server's delayed reply list; 0 means 1024. A try that
	// finds it full is answered LOCKED at once.
	MaxDelayed int

	SafeMode       bool // §5 "making mutex safe"
	Persistent     bool // §5 symmetry breaking: this client never grows its backoff
	DelayedReplies bool // §5 delayed reply list (servers)
	EarlyRelease   bool // give grants back on release and on a lost round
	Grace          bool // a new server incarnation grants nothing for MaxLease+2δ

	// AnchorAtReturn starts the lease when contend returns, as in the paper's
	// Lemma 1, instead of when the winning round was sent. It gives up to 2δ more
	// usable lease but is safe only while delays stay within δ, or with SafeMode;
	// it cannot be combined with DelayedReplies, whose answers arrive arbitrarily
	// long after the grant.
	AnchorAtReturn bool
}

// withDefaults validates c and fills in its defaults.
func (c Config) withDefaults() (Config, quorum.Threshold, error) {
	q, err := quorum.New(c.N, c.B, quorum.Mutex)
	if err != nil {
		return c, q, fmt.Errorf("backoff: %w", err)
	}
	if c.Lease <= 0 {
		return c, q, fmt.Errorf("backoff: lease Δ=%v must be positive", c.Lease)
	}
	if c.MaxDelay < 0 {
		return c, q, fmt.Errorf("backoff: message delay bound δ=%v cannot be negative", c.MaxDelay)
	}
	if c.Lease <= 2*c.MaxDelay {
		return c, q, fmt.Errorf("backoff: lease Δ=%v must exceed the round trip 2δ=%v, or it can be spent before the client learns it won", c.Lease, 2*c.MaxDelay)
	}
	if c.MaxLease == 0 {
		c.MaxLease = c.Lease
	}
	if c.MaxLease < c.Lease {
		return c, q, fmt.Errorf("backoff: MaxLease %v is shorter than the default lease %v", c.MaxLease, c.Lease)
	}
	if c.RoundTimeout < 0 || c.MaxDelayed < 0 {
		return c, q, errors.New("backoff: RoundTimeout and MaxDelayed cannot be negative")
	}
	if c.AnchorAtReturn && c.DelayedReplies {
		return c, q, errors.New("backoff: AnchorAtReturn cannot be combined with DelayedReplies (a held reply says nothing of when the grant was made)")
	}
	if c.Policy == nil {
		c.Policy = Exponential{}
	}
	if c.MaxDelayed == 0 {
		c.MaxDelayed = 1024
	}
	if c.RoundTimeout == 0 {
		switch {
		case c.SafeMode:
			c.RoundTimeout = 2*c.MaxDelay + 1
		case c.DelayedReplies:
			c.RoundTimeout = c.MaxLease + 6*c.MaxDelay
		case c.MaxDelay > 0:
			c.RoundTimeout = 4 * c.MaxDelay
		default:
			c.RoundTimeout = c.Lease
		}
	}
	return c, q, nil
}

// Validate reports whether c describes a possible deployment.
func (c Config) Validate() error {
	_, _, err := c.withDefaults()
	return err
}

// lockWindow is how long a server stays LOCKED after a grant of lease: Δ+2δ.
func (c Config) lockWindow(lease time.Duration) time.Duration { return lease + 2*c.MaxDelay }
