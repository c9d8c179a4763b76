// Package mutex holds what every dhtsync mutual-exclusion protocol shares: the
// [Client] interface that runtimes, workloads and the oracle drive, and the events a
// client core emits. The protocols themselves live in subpackages: backoff (the
// backoff mutex of papers/002), and, later, Sigma and the strawman of papers/003.
package mutex
