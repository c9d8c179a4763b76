package sigma

import (
	"time"

	"github.com/dhtsync/dhtsync/core"
)

// Request asks a replica for its vote, or to queue the client (REQUEST(c, ts)).
// Seq numbers the client's broadcasts so a reply can be matched to its send time.
type Request struct {
	TS  uint64
	Seq uint64
}

// Renew extends the lease of the client's request TS where it is owner.
type Renew struct {
	TS  uint64
	Seq uint64
}

// Yield gives a vote back: the replica re-queues the client and makes the earliest
// queued request owner. A replica that already saw a later message of the same
// request (higher Seq) ignores it: the client has moved on and counted on the
// vote since.
type Yield struct {
	TS  uint64
	Seq uint64
}

// Release ends the request TS: an owner's vote passes to the queue head, a queued
// request is dropped.
type Release struct{ TS uint64 }

// Response is a replica's view, sent in reply to a client message (Seq set) or
// pushed to a client that just became owner (Seq 0).
type Response struct {
	// ClientTS is the timestamp of the recipient's request this view is about.
	ClientTS uint64
	Seq      uint64
	Owner    core.ClientID // "" when the replica has no owner
	OwnerTS  uint64
	// Position is the recipient's place: 0 owner, k ≥ 1 k-th in the queue, -1 not
	// known to the replica (never seen, released, or lost in a reset).
	Position int
	// WaitHint is the informed backoff: how long until the recipient should ask
	// again (position × mean CS time).
	WaitHint time.Duration
	// LeaseLeft is how long the recipient's ownership lasts from when this was sent.
	LeaseLeft time.Duration
	// Clock is the largest request timestamp the replica has seen; clients
	// advance their Lamport clocks with it.
	Clock uint64
	// Incarnation identifies the replica's hosting period; Version orders its
	// responses within one incarnation.
	Incarnation uint64
	Version     uint64
}
