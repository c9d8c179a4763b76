package wire

import (
	"github.com/dhtsync/dhtsync/core"
	"github.com/dhtsync/dhtsync/mutex"
	"github.com/dhtsync/dhtsync/mutex/backoff"
	"github.com/dhtsync/dhtsync/mutex/sigma"
	"github.com/dhtsync/dhtsync/ordering"
	"github.com/dhtsync/dhtsync/p2p/wire/pb"
)

// OrderingState is an ordering replica's state: the object's server and the
// Sigma replica its clients contend through.
type OrderingState struct {
	Server ordering.ServerState
	Mutex  sigma.ReplicaState
}

// StateID says whose state a State is.
type StateID struct {
	Resource    string
	Index       int
	Incarnation uint64
}

// EncodeState encodes a replica state (backoff.ServerState, sigma.ReplicaState
// or OrderingState) taken at time now of the sender's clock. Times travel
// relative to now, so the receiver can place them on its own clock.
func EncodeState(now core.Time, id StateID, st any) *pb.State {
	rel := func(t core.Time) int64 { return int64(t - now) }
	out := &pb.State{Base: int64(now), Incarnation: id.Incarnation, Resource: id.Resource, Index: int32(id.Index)}
	switch st := st.(type) {
	case backoff.ServerState:
		out.Replica = &pb.State_Backoff{Backoff: backoffState(st, rel)}
	case sigma.ReplicaState:
		out.Replica = &pb.State_Sigma{Sigma: sigmaState(st, rel)}
	case OrderingState:
		out.Replica = &pb.State_Ordering{Ordering: &pb.OrderingState{Committed: snapshot(st.Server.Committed),
			Proposed: snapshot(st.Server.Proposed), Proposer: rank(st.Server.Proposer), MaxRank: rank(st.Server.MaxRank),
			Pending: ops(st.Server.Pending), Mutex: sigmaState(st.Mutex, rel)}}
	}
	return out
}

func sigmaState(st sigma.ReplicaState, rel func(core.Time) int64) *pb.SigmaState {
	s := &pb.SigmaState{Incarnation: st.Incarnation, Version: st.Version,
		Owner: &pb.QueuedRequest{Client: string(st.Owner.Client), Ts: st.Owner.TS}, OwnerLastSeq: st.OwnerLastSeq,
		OwnerSince: rel(st.OwnerSince), Expiry: rel(st.Expiry), GraceUntil: rel(st.GraceUntil),
		MeanCs: int64(st.MeanCS), Released: st.LastRelease != 0, Clock: st.Clock}
	if st.LastRelease != 0 {
		s.LastRelease = rel(st.LastRelease)
	}
	for _, q := range st.Queue {
		s.Queue = append(s.Queue, &pb.QueuedRequest{Client: string(q.Client), Ts: q.TS})
	}
	for _, f := range st.Finished {
		s.Finished = append(s.Finished, &pb.FinishedRequest{Client: string(f.Client), Req: f.Req, At: rel(f.At)})
	}
	return s
}

func backoffState(st backoff.ServerState, rel func(core.Time) int64) *pb.BackoffState {
	return &pb.BackoffState{Granted: st.Granted, LastGranted: rel(st.LastGranted), LastLease: int64(st.LastLease),
		LastClient: string(st.LastClient), LastRound: st.LastRound}
}

// DecodeState decodes a replica state onto the receiver's clock: times are
// placed relative to base. For a hand-off base is the arrival time, so every
// lease and lock window appears to start later than it did by the transfer's
// delay: later ends are the safe side. For a restart from storage base is the
// stored Base, the same clock.
func DecodeState(st *pb.State, base core.Time) (id StateID, state any, err error) {
	if st.Index < 0 {
		return StateID{}, nil, malformed("state of replica %d", st.Index)
	}
	id = StateID{Resource: st.Resource, Index: int(st.Index), Incarnation: st.Incarnation}
	abs := func(rel int64) core.Time { return base + core.Time(rel) }
	switch r := st.GetReplica().(type) {
	case *pb.State_Backoff:
		s, err := decodeBackoffState(r.Backoff, abs)
		return id, s, err
	case *pb.State_Sigma:
		out, err := decodeSigmaState(r.Sigma, abs)
		return id, out, err
	case *pb.State_Ordering:
		o := r.Ordering
		committed, err := decodeSnapshot(o.Committed, true)
		if err != nil {
			return StateID{}, nil, err
		}
		proposed, err := decodeSnapshot(o.Proposed, false)
		if err != nil {
			return StateID{}, nil, err
		}
		pending, err := decodeOps(o.Pending)
		if err != nil {
			return StateID{}, nil, err
		}
		m, err := decodeSigmaState(o.Mutex, abs)
		return id, OrderingState{Server: ordering.ServerState{Committed: committed, Proposed: proposed,
			Proposer: decodeRank(o.Proposer), MaxRank: decodeRank(o.MaxRank), Pending: pending}, Mutex: m}, err
	default:
		return StateID{}, nil, malformed("state of no known replica kind")
	}
}

func decodeBackoffState(s *pb.BackoffState, abs func(int64) core.Time) (backoff.ServerState, error) {
	lease, err := duration(s.GetLastLease())
	return backoff.ServerState{Granted: s.GetGranted(), LastGranted: abs(s.GetLastGranted()), LastLease: lease,
		LastClient: core.ClientID(s.GetLastClient()), LastRound: s.GetLastRound()}, err
}

func decodeSigmaState(s *pb.SigmaState, abs func(int64) core.Time) (sigma.ReplicaState, error) {
	mean, err := duration(s.GetMeanCs())
	if err != nil {
		return sigma.ReplicaState{}, err
	}
	out := sigma.ReplicaState{Incarnation: s.GetIncarnation(), Version: s.GetVersion(),
		Owner:        sigma.QueuedRequest{Client: core.ClientID(s.GetOwner().GetClient()), TS: s.GetOwner().GetTs()},
		OwnerLastSeq: s.GetOwnerLastSeq(), OwnerSince: abs(s.GetOwnerSince()), Expiry: abs(s.GetExpiry()),
		GraceUntil: abs(s.GetGraceUntil()), MeanCS: mean, Clock: s.GetClock()}
	if s.GetReleased() {
		out.LastRelease = abs(s.GetLastRelease())
	}
	for _, q := range s.GetQueue() {
		out.Queue = append(out.Queue, sigma.QueuedRequest{Client: core.ClientID(q.Client), TS: q.Ts})
	}
	for _, f := range s.GetFinished() {
		out.Finished = append(out.Finished, mutex.FinishedRequest{Client: core.ClientID(f.Client), Req: f.Req, At: abs(f.At)})
	}
	return out, nil
}
