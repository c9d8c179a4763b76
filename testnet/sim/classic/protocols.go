package classic

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/dhtsync/dhtsync/core"
	"github.com/dhtsync/dhtsync/mutex"
	"github.com/dhtsync/dhtsync/testnet/sim"
)

// Kind names a classic algorithm.
type Kind string

const (
	Centralized    Kind = "centralized"
	TokenRingKind  Kind = "token-ring"
	LamportKind    Kind = "lamport"
	RicartAgrawala Kind = "ricart-agrawala"
	Maekawa        Kind = "maekawa"
	MaekawaFixed   Kind = "maekawa-fixed"
)

// Kinds lists the algorithms.
var Kinds = []Kind{Centralized, TokenRingKind, LamportKind, RicartAgrawala, Maekawa, MaekawaFixed}

// Protocol is a classic algorithm among N processes, the simulation's first N
// clients, as a sim.Protocol. The centralized server is the run's replica 0;
// the other algorithms have no replicas.
type Protocol struct {
	Kind Kind
	N    int
	// Sets overrides Maekawa's grid voting sets (process indices).
	Sets [][]int
}

var _ sim.Protocol = Protocol{}

// Name implements sim.Protocol.
func (p Protocol) Name() string { return string(p.Kind) }

// Replicas implements sim.Protocol.
func (p Protocol) Replicas() int {
	if p.Kind == Centralized {
		return 1
	}
	return 0
}

// NewReplica implements sim.Protocol: the lock server, fresh.
func (p Protocol) NewReplica(int, core.Time, *rand.Rand) (core.Node, error) {
	return &CentralServer{}, nil
}

// NewClient implements sim.Protocol.
func (p Protocol) NewClient(id core.ClientID, _ *rand.Rand) (mutex.Client, error) {
	if p.N < 1 {
		return nil, fmt.Errorf("classic: need at least one process, got %d", p.N)
	}
	names := make([]core.ClientID, p.N)
	for i := range names {
		names[i] = sim.ClientName(i)
	}
	self := slices.Index(names, id)
	if self < 0 {
		return nil, fmt.Errorf("classic: %s is not one of the %d processes (the run has more clients than processes)", id, p.N)
	}
	peers := newPeers(self, names)
	switch p.Kind {
	case Centralized:
		return &CentralClient{id: id}, nil
	case TokenRingKind:
		return &RingNode{peers: peers}, nil
	case LamportKind:
		return &LamportNode{peers: peers}, nil
	case RicartAgrawala:
		return &RANode{peers: peers}, nil
	case Maekawa, MaekawaFixed:
		sets := p.Sets
		if sets == nil {
			sets = GridSets(p.N)
		}
		if len(sets) != p.N {
			return nil, fmt.Errorf("classic: %d voting sets for %d processes", len(sets), p.N)
		}
		return &MaekawaNode{peers: peers, set: sets[self], fix: p.Kind == MaekawaFixed}, nil
	}
	return nil, fmt.Errorf("classic: unknown algorithm %q", p.Kind)
}

// Liar implements sim.Protocol: the classic algorithms assume correct processes.
func (p Protocol) Liar(int, sim.Behaviour, *rand.Rand) (core.Node, error) {
	return nil, errors.New("classic: these algorithms assume no Byzantine processes")
}
