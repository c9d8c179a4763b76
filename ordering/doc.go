// Package ordering will hold the operation-ordering protocol of papers/002 §6–7
// (get/propose/commit with ranks) as pure client and server cores, and the
// replicated objects built on it. Only the package boundary exists so far; the
// quorum arithmetic it needs (intersection ≥ 2b+1, 2b silent, n ≥ 6b+1) is in
// package quorum.
package ordering
