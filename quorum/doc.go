// Package quorum is the arithmetic of threshold masking quorum systems.
//
// A threshold quorum system over n servers takes every set of at least q servers
// as a quorum. Two quorums then share at least 2q-n servers, and a quorum is still
// reachable while n-q servers are silent. dhtsync's protocols need two variants:
//
//   - the backoff mutex (papers/002 §4): quorums intersect in ≥ 3b+1 servers and a
//     quorum survives b failures, possible iff n ≥ 5b+1;
//   - the ordering protocol (papers/002 §6.2): quorums intersect in ≥ 2b+1 servers
//     and a quorum survives 2b silent servers, possible iff n ≥ 6b+1.
//
// Both are built by [New] from a [Requirement]; an impossible (n, b) gives an error
// that names the bound.
package quorum
