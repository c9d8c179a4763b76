package logical

import (
	"log/slog"
	"time"

	"github.com/ipfs/go-datastore"

	"github.com/dhtsync/dhtsync/mutex/backoff"
	"github.com/dhtsync/dhtsync/mutex/sigma"
	"github.com/dhtsync/dhtsync/ordering"
	"github.com/dhtsync/dhtsync/p2p"
)

// Config is a deployment: every peer of a dhtsync network must use the same
// protocol configurations (replica counts, fault bounds, leases, δ), since a
// resource's replicas and clients meet on them.
type Config struct {
	Backoff  backoff.Config
	Sigma    sigma.Config
	Ordering ordering.Config
	// OrderingMutex is the Sigma deployment an object's clients contend
	// through (its N must be the object's).
	OrderingMutex sigma.Config

	// Store keeps replica states; in memory when nil. Give a persistent store
	// (see OpenStore) to keep replicas across restarts.
	Store datastore.Batching
	// CacheTTL is how long a looked-up replica host is trusted (30 s).
	CacheTTL time.Duration
	// LookupTimeout bounds one DHT lookup (10 s).
	LookupTimeout time.Duration
	// HandOffEvery is how often a peer checks whether a closer peer should host
	// one of its replicas (1 s).
	HandOffEvery time.Duration
	// PendingPerKey bounds the messages waiting for one key's lookup (64).
	PendingPerKey int
	Transport     p2p.TransportConfig
	Log           *slog.Logger
}

// DefaultConfig is a deployment for a network whose one-way delays stay under
// maxDelay (δ): backoff n=6 b=1, Sigma n=8 m=6, objects n=7 b=1 (contending
// through Sigma n=7 m=5), leases of 20δ (at least one second), grace periods
// on.
func DefaultConfig(maxDelay time.Duration) Config {
	lease := max(20*maxDelay, time.Second)
	return Config{
		Backoff: backoff.Config{N: 6, B: 1, Lease: lease, MaxDelay: maxDelay,
			DelayedReplies: true, EarlyRelease: true, Grace: true},
		Sigma:         sigma.Config{N: 8, M: 6, Lease: lease, MaxDelay: maxDelay, Grace: true},
		Ordering:      ordering.Config{N: 7, B: 1, Object: ordering.Counter{}, MaxDelay: maxDelay, PhaseTimeout: 4 * maxDelay},
		OrderingMutex: sigma.Config{N: 7, M: 5, Lease: lease, MaxDelay: maxDelay, Grace: true},
	}
}

func (c Config) withDefaults() Config {
	if c.CacheTTL <= 0 {
		c.CacheTTL = 30 * time.Second
	}
	if c.LookupTimeout <= 0 {
		c.LookupTimeout = 10 * time.Second
	}
	if c.HandOffEvery <= 0 {
		c.HandOffEvery = time.Second
	}
	if c.PendingPerKey <= 0 {
		c.PendingPerKey = 64
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
	return c
}
