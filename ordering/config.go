package ordering

import (
	"errors"
	"fmt"
	"time"

	"github.com/dhtsync/dhtsync/quorum"
)

// Config is one replicated object.
type Config struct {
	N, B   int    // replicas, Byzantine tolerated: n ≥ 6b+1
	Object Object // the state machine
	// MaxDelay is δ; a phase without a quorum of answers after PhaseTimeout
	// (0: 8δ, or 1 s if δ is 0) is abandoned and retried.
	MaxDelay     time.Duration
	PhaseTimeout time.Duration
	// KeepVersions is how many versions a result is kept for (0: 64).
	KeepVersions uint64
	// MaxPending bounds a replica's pending operations and waiting submitters
	// (0: 4096); beyond it submissions are dropped and retried by their clients.
	MaxPending int
	// NoRecovery turns reset recovery off: a new incarnation starts from the
	// initial state at once (to show what recovery prevents).
	NoRecovery bool
}

func (c Config) withDefaults() (Config, quorum.Threshold, error) {
	q, err := quorum.New(c.N, c.B, quorum.Ordering)
	if err != nil {
		return c, q, fmt.Errorf("ordering: %w", err)
	}
	if c.Object == nil {
		return c, q, errors.New("ordering: no object")
	}
	if c.MaxDelay < 0 || c.PhaseTimeout < 0 || c.MaxPending < 0 {
		return c, q, errors.New("ordering: durations and limits cannot be negative")
	}
	if c.PhaseTimeout == 0 {
		c.PhaseTimeout = 8 * c.MaxDelay
		if c.MaxDelay == 0 {
			c.PhaseTimeout = time.Second
		}
	}
	if c.KeepVersions == 0 {
		c.KeepVersions = 64
	}
	if c.MaxPending == 0 {
		c.MaxPending = 4096
	}
	return c, q, nil
}

// Validate reports whether c describes a possible deployment.
func (c Config) Validate() error {
	_, _, err := c.withDefaults()
	return err
}
