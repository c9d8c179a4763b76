// Package sigma is the Sigma mutual-exclusion protocol (papers/003, restated in
// DESIGN.md) as pure [Client] and [Replica] cores, built for logical replicas that
// lose their memory when the DHT peer hosting them changes.
//
// A replica keeps an owner, a queue of waiting requests ordered by Lamport
// timestamp (ties by client id), a renewable lease and the mean interval between
// releases, Tcs. It votes for the first requester and queues the others, and
// answers every request with a RESPONSE naming the owner, the requester's queue
// position and a wait hint Tw = position × Tcs.
//
// A client wins when m replicas name it owner (m > n/2; the paper suggests
// m/n ≈ 3/4). While another client holds m it waits; when no client can reach m,
// even counting the replicas that have not answered, it YIELDs the votes it holds,
// and the replicas hand them to the earliest request in their queues, so repeated
// yields converge on one winner. A waiting client re-sends its REQUEST when its
// wait hint runs out (informed backoff), which rebuilds the queue of a replica
// that reset. Ownership is a lease the holder renews; an expired owner is replaced
// by the queue head, so a crashed holder blocks others for at most one lease.
//
// Exclusion: a client counts a vote only until a lower bound of that replica's
// lease expiry, and holds the lock while at least n-m+1 of its votes are valid;
// another client can then collect at most m-1 votes. A reset replica forgets its
// vote, which is why a new incarnation grants nothing for one lease (the grace
// period, Config.Grace).
package sigma
