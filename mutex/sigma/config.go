package sigma

import (
	"fmt"
	"time"
)

// Config is one Sigma deployment; clients and replicas of a resource share it.
type Config struct {
	N int // replicas
	M int // votes needed to win; N/2 < M ≤ N

	// Lease is how long a replica's vote lasts without renewal.
	Lease time.Duration
	// RenewEvery is the holder's renewal period (0: Lease/3).
	RenewEvery time.Duration
	// MaxDelay is δ, the bound on one-way delay in synchronous periods. A client
	// dates a vote pushed to it (not in reply to a message of its own) δ before it
	// arrived.
	MaxDelay time.Duration
	// RetryTimeout is how long a client waits for answers before asking again
	// (0: 4δ, or Lease/4 when δ is 0). Informed backoff never waits less.
	RetryTimeout time.Duration
	// MaxWait caps a wait hint, so that a client re-checks a replica at least
	// this often (0: 10 × Lease).
	MaxWait time.Duration
	// InitialCS is the mean CS time a replica assumes before it has seen a
	// release (0: Lease/4).
	InitialCS time.Duration
	// MaxQueue bounds a replica's queue (0: 4096); requests beyond it are not
	// queued and are told to come back later.
	MaxQueue int
	// Grace: a new incarnation grants nothing for one Lease (it still queues).
	Grace bool
}

func (c Config) withDefaults() (Config, error) {
	switch {
	case c.N < 1:
		return c, fmt.Errorf("sigma: need at least one replica, got n=%d", c.N)
	case 2*c.M <= c.N || c.M > c.N:
		return c, fmt.Errorf("sigma: m=%d votes of n=%d replicas: need n/2 < m ≤ n so that two winners cannot both have m", c.M, c.N)
	case c.Lease <= 0:
		return c, fmt.Errorf("sigma: lease %v must be positive", c.Lease)
	case c.MaxDelay < 0 || c.RenewEvery < 0 || c.RetryTimeout < 0 || c.MaxWait < 0 || c.InitialCS < 0 || c.MaxQueue < 0:
		return c, fmt.Errorf("sigma: durations and limits cannot be negative")
	case c.Lease <= 2*c.MaxDelay:
		return c, fmt.Errorf("sigma: lease %v must exceed the round trip 2δ=%v", c.Lease, 2*c.MaxDelay)
	}
	if c.RenewEvery == 0 {
		c.RenewEvery = c.Lease / 3
	}
	if c.RetryTimeout == 0 {
		c.RetryTimeout = 4 * c.MaxDelay
		if c.MaxDelay == 0 {
			c.RetryTimeout = c.Lease / 4
		}
	}
	if c.MaxWait == 0 {
		c.MaxWait = 10 * c.Lease
	}
	if c.InitialCS == 0 {
		c.InitialCS = c.Lease / 4
	}
	if c.MaxQueue == 0 {
		c.MaxQueue = 4096
	}
	return c, nil
}

// Validate reports whether c describes a possible deployment.
func (c Config) Validate() error {
	_, err := c.withDefaults()
	return err
}
