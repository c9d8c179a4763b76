// Package sim is dhtsync's seeded, single-threaded discrete-event simulator.
//
// It drives the same pure protocol cores as the libp2p runtime, in virtual time:
// one event queue ordered by (time, sequence number), one seed from which every
// random choice is derived (network delays, loss, duplication, reordering, faults,
// workload arrivals, the cores' own backoff), so a seed replays byte for byte.
//
// The layers, bottom up:
//   - [Sim]: the event loop, node registry, crash and reset of nodes, tracing;
//   - [Network]: per-message delay distributions, loss, duplication, reordering
//     and timed partitions;
//   - [Scenario] and [Run]: a protocol ([Protocol]), its faults ([Faults]) and a
//     workload ([Workload]) run to completion, with every critical section checked
//     by the oracle (testnet/oracle) and summarized in [Metrics];
//   - the named scenarios of [Catalog], runnable from `peer sim`.
package sim
