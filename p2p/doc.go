// Package p2p will hold the libp2p side: the host, dhtsync's own Kademlia DHT,
// stream request/response with length-delimited protobuf, and the wall-clock
// runtime that drives the pure cores. Only the package boundary exists so far.
package p2p
