package sim

import (
	"fmt"
	"math/rand/v2"

	"github.com/dhtsync/dhtsync/core"
	"github.com/dhtsync/dhtsync/mutex"
	"github.com/dhtsync/dhtsync/mutex/backoff"
)

// Backoff is the backoff mutex of papers/002 as a simulated [Protocol].
type Backoff struct {
	Config backoff.Config
	// PerClient, if set, adjusts one client's copy of Config (e.g. to make a
	// single client Persistent).
	PerClient func(id core.ClientID, cfg *backoff.Config)
}

// Name implements [Protocol].
func (b Backoff) Name() string { return "backoff" }

// Replicas implements [Protocol].
func (b Backoff) Replicas() int { return b.Config.N }

// NewReplica implements [Protocol].
func (b Backoff) NewReplica(_ int, now core.Time, _ *rand.Rand) (core.Node, error) {
	return backoff.NewServer(b.Config, now)
}

// NewClient implements [Protocol].
func (b Backoff) NewClient(id core.ClientID, rng *rand.Rand) (mutex.Client, error) {
	cfg := b.Config
	if b.PerClient != nil {
		b.PerClient(id, &cfg)
	}
	return backoff.NewClient(cfg, id, rng)
}

// Liar implements [Protocol].
func (b Backoff) Liar(_ int, how Behaviour, rng *rand.Rand) (core.Node, error) {
	switch how {
	case AlwaysFree, AlwaysLocked, RandomAnswer:
		return &backoffLiar{how: how, rng: rng}, nil
	}
	return nil, fmt.Errorf("sim: backoff has no liar that behaves %q", how)
}

// backoffLiar answers every try without keeping any state.
type backoffLiar struct {
	how Behaviour
	rng *rand.Rand
}

func (l *backoffLiar) Receive(_ core.Time, from core.Addr, m core.Message, out core.Sink) {
	t, ok := m.(backoff.Try)
	if !ok {
		return
	}
	free := grants(l.how, l.rng)
	out.Send(from, backoff.TryReply{Round: t.Round, Free: free})
}

func (l *backoffLiar) Wake(core.Time, core.Timer, core.Sink) {}
