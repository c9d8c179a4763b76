package ordering

// ServerState is what a replica must carry into another hosting period to stay
// the same replica (hand-off or restart from stable storage). Waiting
// submitters are left behind: they resend.
type ServerState struct {
	Committed *Snapshot
	Proposed  *Snapshot // nil if none
	Proposer  Rank
	MaxRank   Rank
	Pending   []Op // sorted by ID
}

// State returns the replica's state. A recovering replica has none to give
// (ok false).
func (s *Server) State() (st ServerState, ok bool) {
	if s.recovering {
		return ServerState{}, false
	}
	return ServerState{Committed: s.committed, Proposed: s.proposed, Proposer: s.proposer,
		MaxRank: s.maxRank, Pending: s.pendingOps()}, true
}

// RestoreServer returns a replica that continues from st, with no recovery.
func RestoreServer(cfg Config, st ServerState) (*Server, error) {
	s, err := NewServer(cfg, false)
	if err != nil {
		return nil, err
	}
	if st.Committed != nil {
		s.committed = st.Committed
	}
	s.proposed, s.proposer, s.maxRank = st.Proposed, st.Proposer, st.MaxRank
	for _, op := range st.Pending {
		if len(s.pending) < s.cfg.MaxPending {
			s.pending[op.ID] = op
		}
	}
	return s, nil
}

// ResumeServer returns a replica that continues from st read back from stable
// storage after a restart. Other hosts may have served the replica meanwhile,
// so st may be stale: the replica recovers like a reset one (unless
// cfg.NoRecovery), and keeps its own state where that is the newer.
func ResumeServer(cfg Config, st ServerState) (*Server, error) {
	s, err := RestoreServer(cfg, st)
	if err != nil {
		return nil, err
	}
	s.recovering = !s.cfg.NoRecovery
	return s, nil
}
