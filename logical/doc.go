// Package logical runs dhtsync's protocols on logical replicas in a libp2p
// DHT. Replica i of resource r lives at the Kademlia key
// SHA-256("dhtsync/v1/" + r + "/" + i) (i in decimal), hosted by whichever
// DHT peer is closest to that key. The key derivation is the wire contract:
// every peer, of every version that speaks dhtsync/v1, must compute the same
// keys.
//
// A [Peer] plays both sides:
//
//   - Hosting. A peer serves a replica key only while no peer it is connected
//     to is closer; otherwise it answers with a redirect naming the closer
//     peers. A replica's state is written to the peer's datastore after every
//     step, before the step's messages leave, so a peer restarted with the same
//     identity and data directory resumes its replicas. A peer that begins to
//     host a key with no state starts a new incarnation: to the protocols that
//     is a reset, and the grace periods (and ordering recovery from the other
//     replicas) apply. A peer that learns of a closer peer hands the replica's
//     state over; the receiver continues the same incarnation.
//   - Clients. [Peer.Lock] (backoff mutex or Sigma) and [Peer.Object] (the
//     ordering protocol over Sigma) run the pure client cores with the wall
//     clock and route their messages to the current hosts, found with DHT
//     lookups, cached, and corrected by redirects and failed streams.
//
// Client names are "<peer id>/<local name>" and replicas accept them only over
// a stream from that peer; a peer speaking for a replica must be, as far as
// the receiver knows, the closest peer to that replica's key.
package logical
