// Package ordering is the operation-ordering protocol of papers/002 §6–7 as
// pure cores: a replicated object whose operations are applied in one agreed
// order despite b Byzantine replicas (n ≥ 6b+1), with ranks, and with clients
// (crash-only) doing the ordering.
//
// A client submits an operation to the replicas and returns the response that
// b+1 of them report. Its ordering thread contends for a mutex (the backoff mutex
// by default; only for liveness), gets ⟨σc, σpc, proposer, pending⟩ from a quorum,
// picks the state to (re)commit or derives a new one by applying every pending
// operation reported by b+1 replicas (batching), then proposes and commits it at
// quorums. Ranks order competing ordering threads; b+1 RankExceptions make a
// client abort and raise its rank.
//
// States are [Snapshot]s of an [Object] (a deterministic state machine: the
// package ships a counter, a key-value map and an append-only log). Operations
// are labelled (client, sequence) so that "reflects" is a per-client high-water
// mark. A replica that starts a new incarnation copies the committed state from
// b+1 agreeing replicas before it answers (reset recovery, beyond the paper).
package ordering
