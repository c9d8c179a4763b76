package ordering

import (
	"cmp"

	"github.com/dhtsync/dhtsync/core"
)

// Rank orders ordering threads: N, then the client id, so no two clients ever
// share one.
type Rank struct {
	N      uint64
	Client core.ClientID
}

// Compare orders ranks.
func (r Rank) Compare(o Rank) int {
	return cmp.Or(cmp.Compare(r.N, o.N), cmp.Compare(r.Client, o.Client))
}

// message marks the protocol's messages, to tell them from the mutex's on the
// same replica.
type message interface{ orderingMessage() }

// Submit asks a replica to perform Op (Fig. 3 line 1).
type Submit struct{ Op Op }

// SubmitReply carries an operation's result once it is committed.
type SubmitReply struct {
	ID     OpID
	Result []byte
}

// Get asks for ⟨σc, σpc, proposer, pending⟩ under Rank.
type Get struct{ Rank Rank }

// GetReply answers a Get.
type GetReply struct {
	Rank      Rank
	Committed *Snapshot
	Proposed  *Snapshot // nil if none
	Proposer  Rank
	Pending   []Op // sorted by ID
}

// Propose proposes State under Rank.
type Propose struct {
	Rank  Rank
	State *Snapshot
}

// Commit commits State under Rank.
type Commit struct {
	Rank  Rank
	State *Snapshot
}

// Ack acknowledges a Propose (Commit false) or a Commit of Version.
type Ack struct {
	Rank    Rank
	Version uint64
	Commit  bool
}

// RankException refuses a request of Rank: the replica has seen Max.
type RankException struct {
	Rank Rank
	Max  Rank
}

// StateRequest asks another replica for its committed state (reset recovery).
type StateRequest struct{}

// StateReply answers a StateRequest. A replica that is recovering itself says
// so and sends no state.
type StateReply struct {
	Committed  *Snapshot
	MaxRank    Rank
	Recovering bool
}

func (Submit) orderingMessage()        {}
func (SubmitReply) orderingMessage()   {}
func (Get) orderingMessage()           {}
func (GetReply) orderingMessage()      {}
func (Propose) orderingMessage()       {}
func (Commit) orderingMessage()        {}
func (Ack) orderingMessage()           {}
func (RankException) orderingMessage() {}
func (StateRequest) orderingMessage()  {}
func (StateReply) orderingMessage()    {}

// IsOrdering reports whether m is a message of this protocol.
func IsOrdering(m core.Message) bool { _, ok := m.(message); return ok }
