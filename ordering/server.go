package ordering

import (
	"bytes"
	"slices"

	"github.com/dhtsync/dhtsync/core"
)

// Timer kinds of this package start at 100, clear of the mutex cores'.
const (
	timerRecover uint8 = 100 // server: ask for the committed state again
	timerPhase   uint8 = 101 // client: the phase had no quorum in time
	timerResend  uint8 = 102 // client: resend unanswered submissions
	timerRetry   uint8 = 103 // client: start another ordering round
)

// Server is one replica of the object (Fig. 3).
type Server struct {
	cfg       Config
	committed *Snapshot // σc
	proposed  *Snapshot // σpc
	proposer  Rank
	maxRank   Rank
	pending   map[OpID]Op
	waiters   map[OpID][]core.ClientID

	recovering bool
	replies    map[int]StateReply
}

// NewServer returns a replica. A replica of a new object starts from the
// initial state; one that starts a new incarnation of an existing object
// (reset is true) answers nothing until Start has fetched the committed state
// from b+1 agreeing replicas, unless cfg.NoRecovery.
func NewServer(cfg Config, reset bool) (*Server, error) {
	cfg, _, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Server{cfg: cfg, committed: Initial(), pending: map[OpID]Op{}, waiters: map[OpID][]core.ClientID{},
		recovering: reset && !cfg.NoRecovery, replies: map[int]StateReply{}}, nil
}

// Start implements core.Starter: a recovering replica asks the others.
func (s *Server) Start(now core.Time, out core.Sink) {
	if s.recovering {
		s.askState(now, out)
	}
}

func (s *Server) askState(now core.Time, out core.Sink) {
	clear(s.replies) // ask afresh: some may have finished recovering since
	for i := range s.cfg.N {
		out.Send(core.ReplicaAddr(i), StateRequest{})
	}
	out.SetTimer(now.Add(s.cfg.PhaseTimeout), core.Timer{Kind: timerRecover})
}

// Wake implements core.Node.
func (s *Server) Wake(now core.Time, t core.Timer, out core.Sink) {
	if t.Kind == timerRecover && s.recovering {
		s.askState(now, out)
	}
}

// Receive implements core.Node.
func (s *Server) Receive(now core.Time, from core.Addr, m core.Message, out core.Sink) {
	if from.IsReplica() {
		s.fromReplica(from.Replica, m, out)
		return
	}
	if s.recovering || from.Client == "" {
		return // answers nothing until it knows the committed state
	}
	switch m := m.(type) {
	case Submit:
		s.submit(from.Client, m.Op, out)
	case Get:
		if m.Rank.Compare(s.maxRank) <= 0 {
			out.Send(from, RankException{Rank: m.Rank, Max: s.maxRank})
			return
		}
		s.maxRank = m.Rank
		out.Send(from, GetReply{Rank: m.Rank, Committed: s.committed, Proposed: s.proposed, Proposer: s.proposer, Pending: s.pendingOps()})
	case Propose:
		if m.State == nil || m.Rank.Compare(s.maxRank) < 0 {
			out.Send(from, RankException{Rank: m.Rank, Max: s.maxRank})
			return
		}
		s.maxRank, s.proposer, s.proposed = m.Rank, m.Rank, m.State
		out.Send(from, Ack{Rank: m.Rank, Version: m.State.Version})
	case Commit:
		if m.State == nil || m.Rank.Compare(s.maxRank) < 0 {
			out.Send(from, RankException{Rank: m.Rank, Max: s.maxRank})
			return
		}
		s.maxRank = m.Rank
		s.commit(m.State, out)
		out.Send(from, Ack{Rank: m.Rank, Version: m.State.Version, Commit: true})
	}
}

func (s *Server) submit(c core.ClientID, op Op, out core.Sink) {
	if s.committed.Reflects(op.ID) {
		if r, ok := s.committed.Result(op.ID); ok {
			out.Send(core.ClientAddr(c), SubmitReply{ID: op.ID, Result: r})
		}
		return
	}
	if old, ok := s.pending[op.ID]; ok && !bytes.Equal(old.Body, op.Body) {
		return // the same id with another body: the first one stands
	}
	if _, ok := s.pending[op.ID]; !ok && len(s.pending) >= s.cfg.MaxPending {
		return // full: the client resends
	}
	s.pending[op.ID] = op
	if w := s.waiters[op.ID]; !slices.Contains(w, c) && len(w) < 8 {
		s.waiters[op.ID] = append(w, c)
	}
}

// commit is Fig. 3 lines 19–25: σc ← σ, pending ← pending \ reflected, answer
// the waiting submitters.
func (s *Server) commit(state *Snapshot, out core.Sink) {
	s.committed = state
	for _, op := range s.pendingOps() { // sorted: replies leave in a deterministic order
		id := op.ID
		if !state.Reflects(id) {
			continue
		}
		delete(s.pending, id)
		if r, ok := state.Result(id); ok {
			for _, c := range s.waiters[id] {
				out.Send(core.ClientAddr(c), SubmitReply{ID: id, Result: r})
			}
		}
		delete(s.waiters, id)
	}
}

func (s *Server) pendingOps() []Op {
	ops := make([]Op, 0, len(s.pending))
	for _, op := range s.pending {
		ops = append(ops, op)
	}
	slices.SortFunc(ops, func(a, b Op) int { return compareOpIDs(a.ID, b.ID) })
	return ops
}

// fromReplica serves and completes reset recovery.
func (s *Server) fromReplica(i int, m core.Message, out core.Sink) {
	switch m := m.(type) {
	case StateRequest:
		if s.recovering {
			out.Send(core.ReplicaAddr(i), StateReply{Recovering: true})
			return
		}
		out.Send(core.ReplicaAddr(i), StateReply{Committed: s.committed, MaxRank: s.maxRank})
	case StateReply:
		if !s.recovering || (m.Committed == nil && !m.Recovering) {
			return
		}
		s.replies[i] = m
		s.tryRecover()
	}
}

// tryRecover adopts, once n-b replicas have answered, the newest committed state
// that b+1 of them report (at least one of them correct), and a rank that b+1
// have seen. A state committed at a quorum is then reported by b+1 answers as
// long as at most one of its holders lost it meanwhile (n ≥ 6b+1). Replicas that
// are recovering too answer but count for nothing else, so a few simultaneous
// recoveries do not wait for each other.
func (s *Server) tryRecover() {
	if len(s.replies) < s.cfg.N-s.cfg.B {
		return
	}
	count := map[Digest]int{}
	var ranks []Rank
	for _, r := range s.replies {
		if !r.Recovering {
			count[r.Committed.Digest()]++
			ranks = append(ranks, r.MaxRank)
		}
	}
	var best *Snapshot
	for _, i := range sortedKeys(s.replies) {
		r := s.replies[i]
		if !r.Recovering && count[r.Committed.Digest()] > s.cfg.B && (best == nil || r.Committed.Version > best.Version) {
			best = r.Committed
		}
	}
	if best == nil && s.nothingCommitted() {
		best = Initial() // a new object: every replica starts empty
	}
	if best == nil {
		return
	}
	slices.SortFunc(ranks, func(a, b Rank) int { return b.Compare(a) })
	if best.Version >= s.committed.Version { // a resumed replica keeps a newer state of its own
		s.committed = best
	}
	if len(ranks) > s.cfg.B && ranks[s.cfg.B].Compare(s.maxRank) > 0 {
		s.maxRank = ranks[s.cfg.B]
	}
	s.recovering, s.replies = false, nil
}

// nothingCommitted reports whether the n-b answers show that no state beyond
// the initial one was ever committed: every answer is "recovering" or version 0.
// A committed state reached a quorum, so under the fault model b+1 of any n-b
// answers would report it; with no version above 0 among them, the object is
// new (in a DHT every replica of a new object starts as a reset one, knowing
// nothing, and must not wait for a state nobody has).
func (s *Server) nothingCommitted() bool {
	for _, r := range s.replies {
		if !r.Recovering && r.Committed.Version > 0 {
			return false
		}
	}
	return true
}

// Committed is the replica's committed state σc.
func (s *Server) Committed() *Snapshot { return s.committed }
