package quorum_test

import (
	"fmt"

	"github.com/dhtsync/dhtsync/quorum"
)

func ExampleNew() {
	q, _ := quorum.New(6, 1, quorum.Mutex)
	fmt.Println(q, "intersection", q.MinIntersection(), "survives 1 failure:", q.Tolerates(1))
	_, err := quorum.New(6, 1, quorum.Ordering)
	fmt.Println(err)
	// Output:
	// mutex n=6 b=1 q=5 intersection 4 survives 1 failure: true
	// quorum: ordering quorums with n=6 servers cannot tolerate b=1 Byzantine: need n ≥ 6b+1 = 7
}
