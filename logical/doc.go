// Package logical maps a resource to its logical replicas. Replica i of
// resource r lives at the Kademlia key SHA-256("dhtsync/v1/" + r + "/" + i)
// (i in decimal), hosted by whichever DHT peer is closest to that key. The key
// derivation is the wire contract: every peer, of every version that speaks
// dhtsync/v1, must compute the same keys.
//
// So far the package holds the key derivation; hosting, incarnations, hand-off
// and the replica store come with the libp2p runtime.
package logical
