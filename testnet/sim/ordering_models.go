package sim

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"

	"github.com/anishathalye/porcupine"

	"github.com/dhtsync/dhtsync/ordering"
)

// CounterModel is the sequential specification of ordering.Counter for
// porcupine, written independently of the object's code: add returns the new
// value, read the value. An operation of unknown outcome may or may not have
// taken effect.
var CounterModel = porcupine.Model{
	Init: func() any { return int64(0) },
	Step: func(state, input, output any) (bool, any) {
		v := state.(int64)
		add, read, err := ordering.DecodeCounterOp(input.([]byte))
		if err != nil {
			return false, v
		}
		out := output.(OrderingOutput)
		next := v
		if !read {
			next = v + add
		}
		if out.Unknown {
			return true, next
		}
		got, err := ordering.DecodeCounterResult(out.Result)
		return err == nil && got == next, next
	},
	DescribeOperation: func(input, output any) string {
		add, read, _ := ordering.DecodeCounterOp(input.([]byte))
		op := fmt.Sprintf("add %d", add)
		if read {
			op = "read"
		}
		if out := output.(OrderingOutput); !out.Unknown {
			v, _ := ordering.DecodeCounterResult(out.Result)
			return fmt.Sprintf("%s -> %d", op, v)
		}
		return op + " -> ?"
	},
}

// KVModel is the sequential specification of ordering.KV for porcupine: every
// operation returns the key's previous value; compare-and-swap says whether it
// swapped. Partitioned by key.
var KVModel = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[string][]porcupine.Operation{}
		var keys []string
		for _, op := range history {
			o, _ := ordering.DecodeKVOp(op.Input.([]byte))
			if _, ok := byKey[o.Key]; !ok {
				keys = append(keys, o.Key)
			}
			byKey[o.Key] = append(byKey[o.Key], op)
		}
		var parts [][]porcupine.Operation
		for _, k := range keys {
			parts = append(parts, byKey[k])
		}
		return parts
	},
	Init: func() any { return map[string]string{} },
	Step: func(state, input, output any) (bool, any) {
		m := state.(map[string]string)
		o, err := ordering.DecodeKVOp(input.([]byte))
		if err != nil {
			return false, m
		}
		old, found := m[o.Key]
		next := maps.Clone(m)
		swapped := false
		switch o.Kind {
		case "put":
			next[o.Key] = o.Value
		case "delete":
			delete(next, o.Key)
		case "cas":
			if old == o.Old {
				next[o.Key], swapped = o.Value, true
			}
		}
		out := output.(OrderingOutput)
		if out.Unknown {
			return true, next
		}
		r, err := ordering.DecodeKVResult(out.Result)
		return err == nil && r.Value == old && r.Found == found && r.Swapped == swapped, next
	},
	Equal: func(a, b any) bool { return maps.Equal(a.(map[string]string), b.(map[string]string)) },
	DescribeOperation: func(input, output any) string {
		o, _ := ordering.DecodeKVOp(input.([]byte))
		res := "?"
		if out := output.(OrderingOutput); !out.Unknown {
			r, _ := ordering.DecodeKVResult(out.Result)
			res = fmt.Sprintf("%q found=%v swapped=%v", r.Value, r.Found, r.Swapped)
		}
		return strings.TrimSpace(fmt.Sprintf("%s %s %s %s -> %s", o.Kind, o.Key, o.Old, o.Value, res))
	},
}

// CounterOps draws counter operations: mostly small adds, some reads.
func CounterOps(rng *rand.Rand) []byte {
	if rng.IntN(5) == 0 {
		return ordering.CounterGet()
	}
	return ordering.CounterAdd(int64(1 + rng.IntN(5)))
}

// KVOps draws key-value operations on three keys.
func KVOps(rng *rand.Rand) []byte {
	key := string(rune('a' + rng.IntN(3)))
	v := fmt.Sprint(rng.IntN(4))
	switch rng.IntN(4) {
	case 0:
		return ordering.KVPut(key, v)
	case 1:
		return ordering.KVGet(key)
	case 2:
		return ordering.KVDelete(key)
	}
	return ordering.KVCompareAndSwap(key, fmt.Sprint(rng.IntN(4)), v)
}
