package sim

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/dhtsync/dhtsync/core"
	"github.com/dhtsync/dhtsync/mutex"
	"github.com/dhtsync/dhtsync/mutex/sigma"
	"github.com/dhtsync/dhtsync/mutex/strawman"
)

// Sigma is the Sigma protocol of papers/003 as a simulated [Protocol].
type Sigma struct{ Config sigma.Config }

// Name implements [Protocol].
func (s Sigma) Name() string { return "sigma" }

// Replicas implements [Protocol].
func (s Sigma) Replicas() int { return s.Config.N }

// NewReplica implements [Protocol]: every incarnation gets a random id.
func (s Sigma) NewReplica(_ int, now core.Time, rng *rand.Rand) (core.Node, error) {
	return sigma.NewReplica(s.Config, rng.Uint64(), now)
}

// NewClient implements [Protocol].
func (s Sigma) NewClient(id core.ClientID, _ *rand.Rand) (mutex.Client, error) {
	return sigma.NewClient(s.Config, id)
}

// Liar implements [Protocol]: a replica that tells every requester it is owner
// (AlwaysFree), names a phantom owner (AlwaysLocked), or picks one at random.
func (s Sigma) Liar(_ int, how Behaviour, rng *rand.Rand) (core.Node, error) {
	switch how {
	case AlwaysFree, AlwaysLocked, RandomAnswer:
		return &sigmaLiar{how: how, rng: rng, lease: s.Config.Lease}, nil
	}
	return nil, fmt.Errorf("sim: sigma has no liar that behaves %q", how)
}

type sigmaLiar struct {
	how     Behaviour
	rng     *rand.Rand
	lease   time.Duration
	version uint64
}

func (l *sigmaLiar) Receive(_ core.Time, from core.Addr, m core.Message, out core.Sink) {
	var ts, seq uint64
	switch m := m.(type) {
	case sigma.Request:
		ts, seq = m.TS, m.Seq
	case sigma.Renew:
		ts, seq = m.TS, m.Seq
	default:
		return
	}
	l.version++
	r := sigma.Response{ClientTS: ts, Seq: seq, Owner: "phantom", OwnerTS: 1, Position: 1, Version: l.version}
	if grants(l.how, l.rng) {
		r.Owner, r.OwnerTS, r.Position, r.LeaseLeft = from.Client, ts, 0, l.lease
	}
	out.Send(from, r)
}

func (l *sigmaLiar) Wake(core.Time, core.Timer, core.Sink) {}

// Strawman is the ALOHA-like strawman of papers/003 §III as a simulated [Protocol].
type Strawman struct{ Config strawman.Config }

// Name implements [Protocol].
func (s Strawman) Name() string { return "strawman" }

// Replicas implements [Protocol].
func (s Strawman) Replicas() int { return s.Config.N }

// NewReplica implements [Protocol].
func (s Strawman) NewReplica(_ int, now core.Time, _ *rand.Rand) (core.Node, error) {
	return strawman.NewReplica(s.Config, now)
}

// NewClient implements [Protocol].
func (s Strawman) NewClient(id core.ClientID, rng *rand.Rand) (mutex.Client, error) {
	return strawman.NewClient(s.Config, id, rng)
}

// Liar implements [Protocol]: a replica that grants every request, none, or at
// random.
func (s Strawman) Liar(_ int, how Behaviour, rng *rand.Rand) (core.Node, error) {
	switch how {
	case AlwaysFree, AlwaysLocked, RandomAnswer:
		return &strawmanLiar{how: how, rng: rng}, nil
	}
	return nil, fmt.Errorf("sim: strawman has no liar that behaves %q", how)
}

type strawmanLiar struct {
	how Behaviour
	rng *rand.Rand
}

func (l *strawmanLiar) Receive(_ core.Time, from core.Addr, m core.Message, out core.Sink) {
	if r, ok := m.(strawman.Request); ok {
		grant := grants(l.how, l.rng)
		out.Send(from, strawman.Vote{Round: r.Round, Granted: grant, Owner: "phantom"})
	}
}

func (l *strawmanLiar) Wake(core.Time, core.Timer, core.Sink) {}
