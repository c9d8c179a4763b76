package logical

import "sync/atomic"

// stats counts what a peer did with messages, for tests and status output.
type stats struct {
	dropped      atomic.Int64 // sends refused (backlog, pending lookups full)
	malformed    atomic.Int64 // envelopes that did not decode
	rejected     atomic.Int64 // errors sent back
	redirects    atomic.Int64 // redirects sent
	redirected   atomic.Int64 // redirects received
	remoteErrors atomic.Int64 // errors received
	spoofed      atomic.Int64 // replica messages from a peer that does not host the replica
	lookups      atomic.Int64 // DHT lookups made
	handOffs     atomic.Int64 // replicas handed to a closer peer
	received     atomic.Int64 // replicas received by hand-off
	incarnations atomic.Int64 // new incarnations started (resets)
}

// Stats is a snapshot of a peer's counters.
type Stats struct {
	Dropped, Malformed, Rejected, Redirects, Redirected, RemoteErrors, Spoofed int64
	Lookups, HandOffs, HandOffsReceived, NewIncarnations                       int64
}

// Stats returns the peer's counters.
func (p *Peer) Stats() Stats {
	s := &p.stats
	return Stats{Dropped: s.dropped.Load(), Malformed: s.malformed.Load(), Rejected: s.rejected.Load(),
		Redirects: s.redirects.Load(), Redirected: s.redirected.Load(), RemoteErrors: s.remoteErrors.Load(), Spoofed: s.spoofed.Load(),
		Lookups: s.lookups.Load(), HandOffs: s.handOffs.Load(), HandOffsReceived: s.received.Load(),
		NewIncarnations: s.incarnations.Load()}
}
