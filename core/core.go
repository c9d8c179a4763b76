package core

import (
	"fmt"
	"time"
)

// Time is a point in time in nanoseconds since the runtime's epoch: virtual time in
// the simulator, time since start-up in the wall-clock runtime. Only differences of
// times are meaningful across processes (clocks tick at the same rate but are not
// synchronized).
type Time int64

// Add returns t+d.
func (t Time) Add(d time.Duration) Time { return t + Time(d) }

// Sub returns the duration t-u.
func (t Time) Sub(u Time) time.Duration { return time.Duration(t - u) }

// String prints the time as a duration since the epoch, e.g. "1.25s".
func (t Time) String() string { return time.Duration(t).String() }

// ClientID names a client. At the p2p edge it is an authenticated peer ID; in the
// simulator any unique string. Client ids are totally ordered (Go string order),
// which protocols use to break ties deterministically.
type ClientID string

// Addr is an abstract protocol address: either a client or a replica index within
// the resource a core instance serves.
type Addr struct {
	// Client is set for a client address.
	Client ClientID
	// Replica is the replica index for a replica address, or -1 for a client.
	Replica int
}

// ClientAddr returns the address of client id.
func ClientAddr(id ClientID) Addr { return Addr{Client: id, Replica: -1} }

// ReplicaAddr returns the address of replica i.
func ReplicaAddr(i int) Addr { return Addr{Replica: i} }

// IsReplica reports whether a names a replica.
func (a Addr) IsReplica() bool { return a.Replica >= 0 }

// String prints "r3" for replica 3 and "c:<id>" for a client.
func (a Addr) String() string {
	if a.IsReplica() {
		return fmt.Sprintf("r%d", a.Replica)
	}
	return "c:" + string(a.Client)
}

// Message is a protocol message. Cores define concrete message types; a runtime
// moves them unchanged (the simulator) or encodes them (the p2p runtime).
type Message any

// Event is something a core tells its application: a lease granted, lost, ...
type Event any

// Timer identifies a timer a core armed. It is opaque to the runtime and comes back
// unchanged in [Node.Wake]. Cores never cancel timers; they ignore stale ones.
type Timer struct {
	Kind  uint8
	Round uint64
}

// Sink receives a core's outputs, in the order the core produced them.
type Sink interface {
	// Send asks the runtime to deliver m to the node at address to.
	Send(to Addr, m Message)
	// SetTimer asks the runtime to call Wake(at, t) at time at (or later).
	SetTimer(at Time, t Timer)
	// Emit hands an event to the application that owns this node.
	Emit(e Event)
}

// Node is a protocol role driven by a runtime.
type Node interface {
	// Receive delivers message m from address from at time now.
	Receive(now Time, from Addr, m Message, out Sink)
	// Wake fires timer t, armed earlier with SetTimer, at time now.
	Wake(now Time, t Timer, out Sink)
}

// Starter is implemented by nodes that need to act when their incarnation begins
// (arm a timer, say). A runtime calls Start once, before anything else.
type Starter interface {
	Start(now Time, out Sink)
}
