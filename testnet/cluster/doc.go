// Package cluster runs many dhtsync peers in one process, on libp2p's mock
// network (with per-link latency) or on loopback TCP, for end-to-end tests
// and the `peer testnet` command. Peers can be killed, restarted from their
// identity and data directory, and added; the cluster also knows, from the
// live peers, which one ought to host a replica key.
package cluster
