// Package classic holds the textbook mutual-exclusion algorithms that dhtsync
// is measured against (papers/001 and papers/004): a centralized lock server, a
// token ring, Lamport's algorithm, Ricart–Agrawala, and Maekawa's √N grid voting
// (with the deadlock of the slides, and the inquire/relinquish fix). Each is a
// pure core that plugs into the simulator as a sim.Protocol and shares its
// workloads, oracle and metrics with the real protocols.
//
// They assume reliable channels and processes that do not fail; the comparison
// experiment shows what a crash or a reset does to each. They are baselines, not
// production code, and live here so they do not clutter the production packages.
package classic
