package oracle_test

import (
	"fmt"

	"github.com/dhtsync/dhtsync/testnet/oracle"
)

func Example() {
	o := oracle.New()
	_ = o.Enter("alice", 0)
	_ = o.Enter("bob", 5) // while alice is inside
	_ = o.Exit("alice", 10)
	_ = o.Exit("bob", 20)
	for _, v := range o.Overlaps(20) {
		fmt.Println(v)
	}
	// Output: bob entered at 5ns while alice held [0s, 10ns)
}
