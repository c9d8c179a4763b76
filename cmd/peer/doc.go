// Command peer is dhtsync's command-line tool. For now it runs the simulator:
//
//	peer sim                       run the default scenario (failure-free)
//	peer sim contention --seed 7   run a named scenario with another seed
//	peer sim list                  list the scenarios and sweeps
//	peer sim sweep backoff-policies --out docs/bench
//
// Later it will run a real peer (run, lock, elect, submit, status, testnet).
package main
