package ordering

import (
	"testing"
)

// The objects decode operations and states that arrive from the network (in a
// client's proposal or a Byzantine replica's reply): malformed bytes must give
// an error result, never a panic, and leave the state as it was.
func FuzzObjectsApply(f *testing.F) {
	for _, seed := range [][]byte{CounterAdd(3), CounterGet(), KVPut("k", "v"), KVGet("k"), KVDelete("k"),
		KVCompareAndSwap("k", "a", "b"), LogAppend("x"), {}, {0xff}, {opPut, 200}} {
		f.Add([]byte(nil), seed)
		f.Add(KVPut("k", "v")[1:], seed)
	}
	f.Fuzz(func(t *testing.T, state, op []byte) {
		for _, obj := range []Object{Counter{}, KV{}, Log{}} {
			next, result := obj.Apply(state, op)
			if _, isErr := IsError(result); isErr && string(next) != string(state) {
				t.Fatalf("%s: a failed operation changed the state", obj.Name())
			}
		}
		_, _, _ = DecodeCounterOp(op)
		_, _ = DecodeKVOp(op)
		_, _ = DecodeKVResult(op)
		_, _ = DecodeKV(state)
		_, _ = DecodeLog(state)
	})
}
