// Package strawman is the ALOHA-like majority-vote mutex of papers/003 §III, the
// baseline Sigma is measured against, as pure [Client] and [Replica] cores.
//
// A replica votes for the first requester (a lease) and rejects everyone else,
// naming its owner. A client that collects m votes wins; one that can no longer
// reach m gives its votes back and retries after a random backoff. There is no
// queue and no cooperation, so when requests reach replicas in different orders
// the votes split, everybody loses and retries: throughput collapses as load
// grows, as in ALOHA.
package strawman
