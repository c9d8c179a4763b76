package backoff

import (
	"time"

	"github.com/dhtsync/dhtsync/core"
)

const timerFree uint8 = 1 // server: the lock window may have ended

// Server is one replica of the backoff mutex for one resource (Fig. 1b).
type Server struct {
	cfg Config

	granted     bool // a grant is on record
	lastGranted core.Time
	lastLease   time.Duration
	lastClient  core.ClientID
	lastRound   uint64

	delayed    []delayedTry // the §5 delayed reply list
	timerArmed bool
}

type delayedTry struct {
	client   core.ClientID
	round    uint64
	lease    time.Duration
	received core.Time
}

// NewServer returns a server whose incarnation starts at now. With cfg.Grace it
// answers LOCKED until MaxLease+2δ after now.
func NewServer(cfg Config, now core.Time) (*Server, error) {
	cfg, _, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg}
	if cfg.Grace {
		// A grant no client can release: the server stays locked for one
		// maximum lock window, which outlasts any lease granted before the reset.
		s.granted, s.lastGranted, s.lastLease = true, now, cfg.MaxLease
	}
	return s, nil
}

// free is the paper's test: FREE iff clock() - lastGranted > Δ + 2δ.
func (s *Server) free(now core.Time) bool {
	return !s.granted || now.Sub(s.lastGranted) > s.cfg.lockWindow(s.lastLease)
}

func (s *Server) grant(now core.Time, client core.ClientID, round uint64, lease time.Duration) {
	s.granted, s.lastGranted, s.lastLease = true, now, lease
	s.lastClient, s.lastRound = client, round
}

// Receive implements [core.Node].
func (s *Server) Receive(now core.Time, from core.Addr, m core.Message, out core.Sink) {
	if from.IsReplica() || from.Client == "" {
		return // only clients talk to servers
	}
	switch m := m.(type) {
	case Try:
		s.try(now, from.Client, m, out)
	case Release:
		if s.granted && s.lastClient == from.Client && s.lastRound == m.Round {
			s.granted = false
			s.serveDelayed(now, out)
		}
	}
}

func (s *Server) try(now core.Time, client core.ClientID, m Try, out core.Sink) {
	reply := TryReply{Round: m.Round}
	switch {
	case m.Lease <= 0 || m.Lease > s.cfg.MaxLease:
		// A lease this deployment does not allow: refuse without granting.
	case s.free(now):
		s.grant(now, client, m.Round, m.Lease)
		reply.Free = true
	case s.cfg.DelayedReplies && s.enqueue(now, client, m):
		s.armFreeTimer(out)
		return // answered when the server becomes free
	}
	out.Send(core.ClientAddr(client), reply)
}

// enqueue records a try in the delayed reply list, replacing an older try of the
// same client. It reports false when the list is full.
func (s *Server) enqueue(now core.Time, client core.ClientID, m Try) bool {
	entry := delayedTry{client: client, round: m.Round, lease: m.Lease, received: now}
	for i := range s.delayed {
		if s.delayed[i].client == client {
			s.delayed[i] = entry
			return true
		}
	}
	if len(s.delayed) >= s.cfg.MaxDelayed {
		return false
	}
	s.delayed = append(s.delayed, entry)
	return true
}

func (s *Server) armFreeTimer(out core.Sink) {
	if s.timerArmed || !s.granted {
		return
	}
	s.timerArmed = true
	// The first instant at which free() holds.
	out.SetTimer(s.lastGranted.Add(s.cfg.lockWindow(s.lastLease)+1), core.Timer{Kind: timerFree})
}

// Wake implements [core.Node].
func (s *Server) Wake(now core.Time, t core.Timer, out core.Sink) {
	if t.Kind != timerFree {
		return
	}
	s.timerArmed = false
	s.serveDelayed(now, out)
	if len(s.delayed) > 0 {
		s.armFreeTimer(out) // a release and a new grant moved the window
	}
}

// serveDelayed answers the delayed reply list once the server is free: FREE to the
// lowest client id, LOCKED to everyone else (§5).
func (s *Server) serveDelayed(now core.Time, out core.Sink) {
	if len(s.delayed) == 0 || !s.free(now) {
		return
	}
	winner := 0
	for i, d := range s.delayed {
		if d.client < s.delayed[winner].client {
			winner = i
		}
	}
	w := s.delayed[winner]
	s.grant(now, w.client, w.round, w.lease)
	for i, d := range s.delayed {
		reply := TryReply{Round: d.round}
		if i == winner {
			reply.Free, reply.Held = true, now.Sub(w.received)
		}
		out.Send(core.ClientAddr(d.client), reply)
	}
	s.delayed = s.delayed[:0]
}
