package ordering_test

import (
	"fmt"

	"github.com/dhtsync/dhtsync/ordering"
)

// A state advances by applying the pending operations that b+1 replicas
// report; each client's operations apply in sequence, once.
func ExampleDerive() {
	ops := []ordering.Op{
		{ID: ordering.OpID{Client: "bob", Seq: 1}, Body: ordering.KVPut("x", "1")},
		{ID: ordering.OpID{Client: "ann", Seq: 1}, Body: ordering.KVCompareAndSwap("x", "", "0")},
	}
	v1 := ordering.Derive(ordering.KV{}, ordering.Initial(), ops, 64)
	state, _ := ordering.DecodeKV(v1.Data)
	res, _ := v1.Result(ordering.OpID{Client: "bob", Seq: 1})
	put, _ := ordering.DecodeKVResult(res)
	fmt.Println(v1.Version, state, put.Value)
	// Output: 1 map[x:1] 0
}
