// Package backoff is the backoff mutual-exclusion protocol of Chockler, Malkhi and
// Reiter (papers/002 §4, Fig. 1) as two pure cores, [Client] and [Server], with the
// §5 optimizations and two extensions as options.
//
// A server answers try() with FREE iff more than Δ+2δ passed since it last answered
// FREE (then it remembers the grant), else LOCKED. A client sends try to all n
// servers, waits for a quorum (intersection ≥ 3b+1, survives b failures, so
// n ≥ 5b+1), wins iff at most b answers are LOCKED, and otherwise sleeps a random
// delay drawn by its [Policy] before the next round. The winner owns the resource
// until Δ after it sent the winning round.
//
// Options ([Config]):
//   - Persistent: symmetry breaking (§5): this client never grows its backoff.
//   - DelayedReplies: the server's delayed reply list (§5): tries that arrive while
//     it is locked are answered when it becomes free, FREE to the lowest client id.
//   - SafeMode (§5): replies that arrive more than 2δ after their round was sent are
//     ignored, so a late quorum never makes a winner.
//   - per-call Δ (§5): Client.Acquire takes the lease length, up to MaxLease.
//   - EarlyRelease (beyond the paper): a client gives its grants back when it leaves
//     the critical section or loses a round; a server forgets a grant only if the
//     release names the client and round it last granted.
//   - Grace (beyond the paper): a server that starts (a new incarnation after a
//     reset) answers LOCKED for one maximum lease, so no lease granted before the
//     reset can still be live when it first answers FREE.
//   - AnchorAtReturn: the paper's reading of the lease (Δ from when contend
//     returns), safe only in synchronous periods or with SafeMode.
//
// Anchoring the lease at the send of the winning round (the default) keeps
// exclusion even when messages are late: a correct server in the intersection of
// two winning quorums granted the first winner no earlier than that send and the
// second no earlier than Δ+2δ later, whatever the delays. Asynchrony then costs
// only usable lease time, which SafeMode bounds from below.
package backoff
