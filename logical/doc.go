// Package logical will map a resource to its logical replicas: replica i of
// resource r lives at Kademlia key SHA-256("dhtsync/v1/" + r + "/" + i), hosted by
// whichever DHT peer is closest to it, with incarnations, hand-off and a replica
// store. Only the package boundary exists so far.
package logical
