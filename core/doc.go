// Package core is the shared vocabulary of dhtsync's pure protocol cores.
//
// Every protocol role (a backoff-mutex client, a backoff-mutex server, later Sigma
// and the ordering roles) is a deterministic state machine. It is driven by a
// runtime through two inputs, a delivered message ([Node.Receive]) and a timer that
// fired ([Node.Wake]), and it answers only through a [Sink]: messages to send, timers
// to arm and events for the application. A core never starts a goroutine, never reads
// the wall clock and draws randomness only from a *rand.Rand it was given, so the
// simulator in testnet/sim can replay any run from its seed and the libp2p runtime
// can drive the very same code with real time.
//
// Addresses are abstract: a client id or a replica index within one resource. The
// runtime maps them to peers.
package core
