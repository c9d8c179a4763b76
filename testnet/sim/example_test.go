package sim_test

import (
	"fmt"

	"github.com/dhtsync/dhtsync/testnet/sim"
)

func ExampleRun() {
	sc, _ := sim.Lookup("byzantine")
	m, _ := sim.Run(7, sc, nil)
	fmt.Printf("%d critical sections, %d overlaps, completed %v\n", m.Entries, m.Overlaps, m.Completed)
	// Output: 80 critical sections, 0 overlaps, completed true
}
