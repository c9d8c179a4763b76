// Package p2p is the libp2p side of dhtsync: building a host (identity from a
// key file, TCP and QUIC, resource limits for our protocols), dhtsync's own
// Kademlia DHT, optional discovery through the public libp2p network, the
// [Transport] that carries length-delimited protobuf envelopes over one
// long-lived stream per peer and protocol in both directions, and the [Runner]
// that drives a pure protocol core with the wall clock.
//
// Nothing here knows about replicas or keys: that is package logical.
package p2p
