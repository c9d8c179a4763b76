// Package oracle checks mutual exclusion after the fact: it records every critical
// section interval and counts the ones that overlap an interval of another holder.
// It knows nothing of protocols or runtimes, so the simulator and a real libp2p
// testnet feed it the same way.
package oracle
