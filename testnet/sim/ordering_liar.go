package sim

import (
	"fmt"
	"math/rand/v2"

	"github.com/dhtsync/dhtsync/core"
	"github.com/dhtsync/dhtsync/ordering"
)

// OrderingLie is how a Byzantine ordering replica lies.
type OrderingLie string

const (
	// StaleState reports the initial state as committed and nothing proposed.
	StaleState OrderingLie = "stale"
	// ForgedRank refuses everything, claiming an enormous rank.
	ForgedRank OrderingLie = "forged-rank"
	// FakePending reports operations nobody submitted.
	FakePending OrderingLie = "fake-pending"
	// FalseRankException refuses everything with a rank just above the request's.
	FalseRankException OrderingLie = "false-rank-exception"
	// Equivocate tells different clients different, forged states.
	Equivocate OrderingLie = "equivocate"
)

// OrderingLies lists the lies.
var OrderingLies = []OrderingLie{StaleState, ForgedRank, FakePending, FalseRankException, Equivocate}

// orderingLiar runs a correct replica underneath (so its lies are plausible)
// and rewrites what it sends.
type orderingLiar struct {
	inner *ordering.Replica
	lie   OrderingLie
	rng   *rand.Rand
	sink  rewriteSink
}

func newOrderingLiar(inner *ordering.Replica, lie OrderingLie, rng *rand.Rand) (core.Node, error) {
	switch lie {
	case StaleState, ForgedRank, FakePending, FalseRankException, Equivocate:
	default:
		return nil, fmt.Errorf("sim: unknown ordering lie %q", lie)
	}
	l := &orderingLiar{inner: inner, lie: lie, rng: rng}
	l.sink.l = l
	return l, nil
}

type rewriteSink struct {
	l   *orderingLiar
	out core.Sink
}

func (s *rewriteSink) Send(to core.Addr, m core.Message) { s.out.Send(to, s.l.rewrite(to, m)) }
func (s *rewriteSink) SetTimer(at core.Time, t core.Timer) {
	s.out.SetTimer(at, t)
}
func (s *rewriteSink) Emit(e core.Event) { s.out.Emit(e) }

func (l *orderingLiar) Start(now core.Time, out core.Sink) {
	l.sink.out = out
	l.inner.Start(now, &l.sink)
}

func (l *orderingLiar) Receive(now core.Time, from core.Addr, m core.Message, out core.Sink) {
	l.sink.out = out
	l.inner.Receive(now, from, m, &l.sink)
}

func (l *orderingLiar) Wake(now core.Time, t core.Timer, out core.Sink) {
	l.sink.out = out
	l.inner.Wake(now, t, &l.sink)
}

// forged is a state no correct replica ever committed.
func (l *orderingLiar) forged() *ordering.Snapshot {
	return ordering.NewSnapshot(1000+l.rng.Uint64N(1000), ordering.Digest{1}, []byte{byte(l.rng.Uint32())}, nil, nil)
}

func (l *orderingLiar) rewrite(to core.Addr, m core.Message) core.Message {
	refuse := func(r ordering.Rank, max ordering.Rank) core.Message {
		return ordering.RankException{Rank: r, Max: max}
	}
	switch l.lie {
	case StaleState:
		if g, ok := m.(ordering.GetReply); ok {
			g.Committed, g.Proposed, g.Pending = ordering.Initial(), nil, nil
			return g
		}
	case ForgedRank:
		huge := ordering.Rank{N: 1 << 62, Client: "byzantine"}
		switch m := m.(type) {
		case ordering.GetReply:
			return refuse(m.Rank, huge)
		case ordering.Ack:
			return refuse(m.Rank, huge)
		}
	case FalseRankException:
		switch m := m.(type) {
		case ordering.GetReply:
			return refuse(m.Rank, ordering.Rank{N: m.Rank.N + 1, Client: m.Rank.Client})
		case ordering.Ack:
			return refuse(m.Rank, ordering.Rank{N: m.Rank.N + 1, Client: m.Rank.Client})
		}
	case FakePending:
		if g, ok := m.(ordering.GetReply); ok {
			fake := ordering.Op{ID: ordering.OpID{Client: "phantom", Seq: 1 + l.rng.Uint64N(3)}, Body: []byte{byte(l.rng.Uint32())}}
			g.Pending = append(append([]ordering.Op(nil), g.Pending...), fake)
			return g
		}
	case Equivocate:
		if g, ok := m.(ordering.GetReply); ok && l.rng.IntN(2) == 0 {
			f := l.forged()
			g.Committed, g.Proposed, g.Proposer = f, f, ordering.Rank{N: 1 << 62, Client: "byzantine"}
			return g
		}
		if r, ok := m.(ordering.SubmitReply); ok && l.rng.IntN(2) == 0 {
			r.Result = []byte("forged")
			return r
		}
	}
	return m
}
