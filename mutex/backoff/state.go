package backoff

import (
	"time"

	"github.com/dhtsync/dhtsync/core"
)

// ServerState is what a server must carry into another hosting period to stay
// the same replica (hand-off or restart from stable storage): the last grant.
// The delayed reply list is left behind; its clients time out and try again,
// as after a lost message.
type ServerState struct {
	Granted     bool
	LastGranted core.Time
	LastLease   time.Duration
	LastClient  core.ClientID
	LastRound   uint64
}

// State returns the server's state.
func (s *Server) State() ServerState {
	return ServerState{Granted: s.granted, LastGranted: s.lastGranted, LastLease: s.lastLease,
		LastClient: s.lastClient, LastRound: s.lastRound}
}

// RestoreServer returns a server that continues from st, without the grace
// period: it is the same replica, not a reset one.
func RestoreServer(cfg Config, st ServerState) (*Server, error) {
	cfg.Grace = false
	s, err := NewServer(cfg, 0)
	if err != nil {
		return nil, err
	}
	s.granted, s.lastGranted, s.lastLease = st.Granted, st.LastGranted, st.LastLease
	s.lastClient, s.lastRound = st.LastClient, st.LastRound
	return s, nil
}
