package logical

import (
	"errors"
	"fmt"
	"time"

	"github.com/libp2p/go-libp2p/core/protocol"

	"github.com/dhtsync/dhtsync/core"
	"github.com/dhtsync/dhtsync/mutex/backoff"
	"github.com/dhtsync/dhtsync/mutex/sigma"
	"github.com/dhtsync/dhtsync/ordering"
	"github.com/dhtsync/dhtsync/p2p/wire"
)

// service is one replicated protocol as the hosting side sees it: how to start
// a replica in a new incarnation (a reset one), how to continue one from a
// carried state, and how to take that state.
type service struct {
	name  string // datastore namespace and log name
	proto protocol.ID
	n     int
	// grace is how long a new incarnation refuses to grant; a hand-off that
	// arrives within it replaces the new incarnation (which granted nothing).
	grace      time.Duration
	newReplica func(now core.Time, incarnation uint64) (core.Node, error)
	// restore continues a replica from a carried state. A state read back
	// from this peer's own store after a restart (resumed) may be stale:
	// another peer may have hosted the replica meanwhile, so it resumes with
	// the grace period (and an ordering replica recovers too). A hand-off's
	// state is current and continues as it is.
	restore func(state any, resumed bool, now core.Time) (core.Node, error)
	state   func(node core.Node) (any, bool)
}

func backoffService(cfg backoff.Config) (*service, error) {
	if _, err := backoff.NewServer(cfg, 0); err != nil {
		return nil, err
	}
	return &service{name: "backoff", proto: wire.Backoff, n: cfg.N, grace: backoffGrace(cfg),
		newReplica: func(now core.Time, _ uint64) (core.Node, error) { return backoff.NewServer(cfg, now) },
		restore: func(st any, resumed bool, now core.Time) (core.Node, error) {
			s, ok := st.(backoff.ServerState)
			if !ok {
				return nil, fmt.Errorf("logical: a %T is not a backoff replica", st)
			}
			if resumed && cfg.Grace {
				// A backoff replica's state is its last grant, which the grace
				// window outlasts: resuming is starting afresh in grace.
				return backoff.NewServer(cfg, now)
			}
			return backoff.RestoreServer(cfg, s)
		},
		state: func(node core.Node) (any, bool) { return node.(*backoff.Server).State(), true },
	}, nil
}

// backoffGrace is how long a new backoff server answers LOCKED: one maximal
// lock window.
func backoffGrace(cfg backoff.Config) time.Duration {
	if !cfg.Grace {
		return 0
	}
	return max(cfg.MaxLease, cfg.Lease) + 2*cfg.MaxDelay
}

func sigmaService(cfg sigma.Config) (*service, error) {
	if _, err := sigma.NewReplica(cfg, 0, 0); err != nil {
		return nil, err
	}
	grace := time.Duration(0)
	if cfg.Grace {
		grace = cfg.Lease
	}
	return &service{name: "sigma", proto: wire.Sigma, n: cfg.N, grace: grace,
		newReplica: func(now core.Time, incarnation uint64) (core.Node, error) {
			return sigma.NewReplica(cfg, incarnation, now)
		},
		restore: func(st any, resumed bool, now core.Time) (core.Node, error) {
			s, ok := st.(sigma.ReplicaState)
			if !ok {
				return nil, fmt.Errorf("logical: a %T is not a Sigma replica", st)
			}
			return resumeSigma(cfg, s, resumed, now)
		},
		state: func(node core.Node) (any, bool) { return node.(*sigma.Replica).State(), true },
	}, nil
}

// resumeSigma continues a Sigma replica; resumed from storage, it keeps its
// queue and owner but grants nothing for one lease.
func resumeSigma(cfg sigma.Config, st sigma.ReplicaState, resumed bool, now core.Time) (*sigma.Replica, error) {
	if resumed && cfg.Grace {
		st.GraceUntil = max(st.GraceUntil, now.Add(cfg.Lease))
	}
	return sigma.RestoreReplica(cfg, st)
}

// orderingService hosts an object's replicas: the ordering server and the
// Sigma replica its clients contend through, on the same logical replica.
// Sigma rather than the backoff mutex: a client that loses a backoff round
// sleeps about a lease, which made contended objects crawl (2.4 operations/s
// for two clients on 10 ms links); Sigma queues it instead. The mutex serves
// only liveness here: the ordering protocol is safe under any mutex.
func orderingService(cfg ordering.Config, mutexCfg sigma.Config) (*service, error) {
	if mutexCfg.N != cfg.N {
		return nil, errors.New("logical: the ordering mutex must have the object's replicas")
	}
	if _, err := ordering.NewServer(cfg, false); err != nil {
		return nil, err
	}
	mutex, err := sigmaService(mutexCfg)
	if err != nil {
		return nil, err
	}
	return &service{name: "ordering", proto: wire.Ordering, n: cfg.N, grace: mutex.grace,
		newReplica: func(now core.Time, incarnation uint64) (core.Node, error) {
			s, err := ordering.NewServer(cfg, true)
			if err != nil {
				return nil, err
			}
			m, err := sigma.NewReplica(mutexCfg, incarnation, now)
			return &ordering.Replica{Server: s, Mutex: m}, err
		},
		restore: func(st any, resumed bool, now core.Time) (core.Node, error) {
			s, ok := st.(wire.OrderingState)
			if !ok {
				return nil, fmt.Errorf("logical: a %T is not an ordering replica", st)
			}
			resume := ordering.RestoreServer
			if resumed {
				resume = ordering.ResumeServer
			}
			srv, err := resume(cfg, s.Server)
			if err != nil {
				return nil, err
			}
			m, err := resumeSigma(mutexCfg, s.Mutex, resumed, now)
			return &ordering.Replica{Server: srv, Mutex: m}, err
		},
		state: func(node core.Node) (any, bool) {
			r := node.(*ordering.Replica)
			st, ok := r.Server.State()
			if !ok {
				return nil, false // recovering: nothing worth carrying
			}
			return wire.OrderingState{Server: st, Mutex: r.Mutex.(*sigma.Replica).State()}, true
		},
	}, nil
}
