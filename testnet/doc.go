// Package testnet groups the networks dhtsync runs on for tests, demos and
// benchmarks: the seeded discrete-event simulator (testnet/sim) and the oracle
// (testnet/oracle) that checks every run, simulated or real, for mutual exclusion.
package testnet
