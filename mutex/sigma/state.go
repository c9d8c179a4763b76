package sigma

import (
	"time"

	"github.com/dhtsync/dhtsync/core"
	"github.com/dhtsync/dhtsync/mutex"
)

// QueuedRequest is a waiting request in a [ReplicaState].
type QueuedRequest struct {
	Client core.ClientID
	TS     uint64
}

// ReplicaState is what a replica must carry into another hosting period to stay
// the same replica (hand-off or restart from stable storage). The incarnation
// stays the same: clients see no reset.
type ReplicaState struct {
	Incarnation  uint64
	Version      uint64
	Owner        QueuedRequest // Client "" when there is none
	OwnerLastSeq uint64
	OwnerSince   core.Time
	Expiry       core.Time
	GraceUntil   core.Time
	Queue        []QueuedRequest // in queue order
	MeanCS       time.Duration
	LastRelease  core.Time // zero when no release was seen
	Clock        uint64
	Finished     []mutex.FinishedRequest
}

// State returns the replica's state.
func (r *Replica) State() ReplicaState {
	st := ReplicaState{Incarnation: r.incarnation, Version: r.version,
		Owner: QueuedRequest{r.owner.client, r.owner.ts}, OwnerLastSeq: r.owner.lastSeq,
		OwnerSince: r.ownerSince, Expiry: r.expiry, GraceUntil: r.graceUntil, MeanCS: r.meanCS,
		Clock: r.clock, Finished: r.finished.Requests()}
	if r.released {
		st.LastRelease = r.lastRelease
	}
	for _, q := range r.queue.sorted {
		st.Queue = append(st.Queue, QueuedRequest{q.client, q.ts})
	}
	return st
}

// RestoreReplica returns a replica that continues from st. Its Start re-arms
// the lease and grace timers.
func RestoreReplica(cfg Config, st ReplicaState) (*Replica, error) {
	cfg.Grace = false
	r, err := NewReplica(cfg, st.Incarnation, st.GraceUntil)
	if err != nil {
		return nil, err
	}
	r.version, r.clock, r.meanCS = st.Version, st.Clock, max(st.MeanCS, 0)
	r.graceUntil = st.GraceUntil
	if st.Owner.Client != "" {
		r.owner = owner{request: request{st.Owner.Client, st.Owner.TS}, lastSeq: st.OwnerLastSeq}
		r.ownerSince, r.expiry = st.OwnerSince, st.Expiry
	}
	if st.LastRelease != 0 {
		r.lastRelease, r.released = st.LastRelease, true
	}
	for _, q := range st.Queue {
		if len(r.queue.sorted) < r.cfg.MaxQueue {
			r.queue.Insert(request{q.Client, q.TS})
		}
	}
	r.finished.Restore(st.Finished)
	return r, nil
}
