package wire

import "github.com/libp2p/go-libp2p/core/protocol"

// Protocol IDs, one per replicated service. A peer that does not speak a
// version refuses the stream during negotiation.
const (
	Backoff  protocol.ID = "/dhtsync/mutex/backoff/1.0.0"
	Sigma    protocol.ID = "/dhtsync/mutex/sigma/1.0.0"
	Ordering protocol.ID = "/dhtsync/ordering/1.0.0"
)

// Protocols lists the protocol IDs of this version.
var Protocols = []protocol.ID{Backoff, Sigma, Ordering}

// MaxMessage is the default cap on one envelope's encoded size. An ordering
// snapshot carries the object's whole state, so this also bounds objects.
const MaxMessage = 4 << 20
