package mutex

import (
	"time"

	"github.com/dhtsync/dhtsync/core"
)

// Client is the client role of a mutual-exclusion protocol as a pure core.
//
// The application calls Acquire, waits for an [Acquired] event, uses the resource
// until Acquired.Until at the latest, and calls Release. A client contends for one
// acquisition at a time.
type Client interface {
	core.Node
	// ID is the client's identity.
	ID() core.ClientID
	// Acquire starts contending for a lease of length lease (0 = the protocol's
	// default). It returns an error, and changes nothing, when the client is already
	// contending or holding, or when lease is invalid.
	Acquire(now core.Time, lease time.Duration, out core.Sink) error
	// Release ends the current lease (or abandons contention). It is a no-op for an
	// idle client.
	Release(now core.Time, out core.Sink)
}

// Acquired is emitted when the client enters the critical section. It may use the
// resource until Until (on its own clock).
type Acquired struct {
	Until core.Time
	// Rounds is the number of contention rounds this acquisition took (1 when
	// contention-free).
	Rounds int
	// Voters are the replicas whose grants this entry rests on. Exclusion can
	// be lost only if enough of them lose their memory while it lasts.
	Voters []int
}

// Extended is emitted when a held lease was renewed past the Until last told.
type Extended struct {
	Until core.Time
}
