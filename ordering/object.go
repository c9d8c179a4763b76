package ordering

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

// Object is a replicated object's state machine. Apply must be deterministic for
// a given (state, operation) only where replicas need to agree on its result;
// it runs once, at the ordering client, and its result travels in the state, so
// non-deterministic operations are allowed too. Encodings are deterministic.
type Object interface {
	// Name labels the object type.
	Name() string
	// Apply returns the state after op and op's result. A malformed op leaves
	// the state unchanged and returns an error result.
	Apply(state, op []byte) (next, result []byte)
}

// Counter is a 64-bit counter. Operations: CounterAdd(k) returns the new value;
// CounterGet() returns the value.
type Counter struct{}

// Name implements Object.
func (Counter) Name() string { return "counter" }

const (
	opAdd byte = 1
	opGet byte = 2
	opPut byte = 3
	opDel byte = 4
	opCAS byte = 5
	opApp byte = 6
)

// CounterAdd encodes "add k".
func CounterAdd(k int64) []byte { return binary.AppendVarint([]byte{opAdd}, k) }

// CounterGet encodes "read".
func CounterGet() []byte { return []byte{opGet} }

// Apply implements Object.
func (Counter) Apply(state, op []byte) ([]byte, []byte) {
	v, _ := binary.Varint(state)
	switch {
	case len(op) >= 1 && op[0] == opGet && len(op) == 1:
	case len(op) >= 2 && op[0] == opAdd:
		k, n := binary.Varint(op[1:])
		if n <= 0 || 1+n != len(op) {
			return state, errorResult("counter: malformed add")
		}
		v += k
	default:
		return state, errorResult("counter: unknown operation")
	}
	return binary.AppendVarint(nil, v), CounterResult(v)
}

// DecodeCounter reads a counter state.
func DecodeCounter(state []byte) int64 { v, _ := binary.Varint(state); return v }

// Results start with a status byte, so that no result can pass for an error.
const (
	resultOK    byte = 0
	resultError byte = 0xff
)

// CounterResult encodes the result of a counter operation: the value after it.
func CounterResult(v int64) []byte { return binary.AppendVarint([]byte{resultOK}, v) }

// DecodeCounterResult reads a counter operation's result.
func DecodeCounterResult(result []byte) (int64, error) {
	if len(result) < 2 || result[0] != resultOK {
		return 0, errors.New("counter: not a value result")
	}
	v, n := binary.Varint(result[1:])
	if n <= 0 || 1+n != len(result) {
		return 0, errors.New("counter: malformed result")
	}
	return v, nil
}

func errorResult(msg string) []byte { return append([]byte{resultError}, msg...) }

// IsError reports whether a result is an error, and its message.
func IsError(result []byte) (string, bool) {
	if len(result) > 0 && result[0] == resultError {
		return string(result[1:]), true
	}
	return "", false
}

// KV is a map from string keys to string values. Operations: KVPut, KVGet,
// KVDelete, KVCompareAndSwap; results are KVResult encodings.
type KV struct{}

// Name implements Object.
func (KV) Name() string { return "kv" }

// KVPut sets key to value.
func KVPut(key, value string) []byte { return appendStrings([]byte{opPut}, key, value) }

// KVGet reads key.
func KVGet(key string) []byte { return appendStrings([]byte{opGet}, key) }

// KVDelete removes key.
func KVDelete(key string) []byte { return appendStrings([]byte{opDel}, key) }

// KVCompareAndSwap sets key to value if it holds old ("" and absent are equal).
func KVCompareAndSwap(key, old, value string) []byte {
	return appendStrings([]byte{opCAS}, key, old, value)
}

// KVResult is the result of a KV operation: the key's value before the
// operation (Found false if absent) and, for CAS, whether it swapped.
type KVResult struct {
	Value   string
	Found   bool
	Swapped bool
}

// DecodeKVResult reads a KV result.
func DecodeKVResult(b []byte) (KVResult, error) {
	if len(b) < 2 {
		return KVResult{}, errors.New("kv: short result")
	}
	s, err := readStrings(b[2:], 1)
	if err != nil {
		return KVResult{}, err
	}
	return KVResult{Value: s[0], Found: b[0] == 1, Swapped: b[1] == 1}, nil
}

// Apply implements Object.
func (KV) Apply(state, op []byte) ([]byte, []byte) {
	m, err := decodeMap(state)
	if err != nil || len(op) == 0 {
		return state, errorResult("kv: malformed state or operation")
	}
	want := map[byte]int{opPut: 2, opGet: 1, opDel: 1, opCAS: 3}[op[0]]
	args, err := readStrings(op[1:], want)
	if want == 0 || err != nil {
		return state, errorResult("kv: malformed operation")
	}
	old, found := m[args[0]]
	swapped := false
	switch op[0] {
	case opPut:
		m[args[0]] = args[1]
	case opDel:
		delete(m, args[0])
	case opCAS:
		if old == args[1] {
			m[args[0]], swapped = args[2], true
		}
	}
	result := appendStrings([]byte{b2i(found), b2i(swapped)}, old)
	if op[0] == opGet {
		return state, result
	}
	return encodeMap(m), result
}

// DecodeKV reads a KV state.
func DecodeKV(state []byte) (map[string]string, error) { return decodeMap(state) }

// Log is an append-only log: with it the replicated object is a total-order
// broadcast. LogAppend(entry) returns the entry's index; LogRead() returns the
// length.
type Log struct{}

// Name implements Object.
func (Log) Name() string { return "log" }

// LogAppend appends entry.
func LogAppend(entry string) []byte { return appendStrings([]byte{opApp}, entry) }

// Apply implements Object.
func (Log) Apply(state, op []byte) ([]byte, []byte) {
	if len(op) == 0 || op[0] != opApp {
		return state, errorResult("log: unknown operation")
	}
	entry, err := readStrings(op[1:], 1)
	if err != nil {
		return state, errorResult("log: malformed append")
	}
	n, rest := binary.Uvarint(state)
	if len(state) == 0 {
		n, rest = 0, 0
	}
	next := binary.AppendUvarint(nil, n+1)
	next = append(next, state[max(rest, 0):]...)
	next = appendStrings(next, entry[0])
	return next, binary.AppendUvarint([]byte{resultOK}, n)
}

// DecodeLog reads a log state.
func DecodeLog(state []byte) ([]string, error) {
	if len(state) == 0 {
		return nil, nil
	}
	n, k := binary.Uvarint(state)
	if k <= 0 || n > uint64(len(state)) {
		return nil, errors.New("log: malformed state")
	}
	return readStrings(state[k:], int(n))
}

func b2i(b bool) byte {
	if b {
		return 1
	}
	return 0
}

func appendStrings(b []byte, ss ...string) []byte {
	for _, s := range ss {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return b
}

func readStrings(b []byte, n int) ([]string, error) {
	if n < 0 || n > len(b) { // every string takes at least its length byte
		return nil, fmt.Errorf("ordering: malformed encoding")
	}
	out := make([]string, 0, n)
	for range n {
		l, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < l {
			return nil, fmt.Errorf("ordering: malformed encoding")
		}
		out = append(out, string(b[k:k+int(l)]))
		b = b[k+int(l):]
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("ordering: trailing bytes")
	}
	return out, nil
}

func encodeMap(m map[string]string) []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b := binary.AppendUvarint(nil, uint64(len(keys)))
	for _, k := range keys {
		b = appendStrings(b, k, m[k])
	}
	return b
}

func decodeMap(b []byte) (map[string]string, error) {
	m := map[string]string{}
	if len(b) == 0 {
		return m, nil
	}
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, errors.New("kv: malformed state")
	}
	s, err := readStrings(b[k:], 2*int(n))
	if err != nil {
		return nil, err
	}
	for i := 0; i < len(s); i += 2 {
		m[s[i]] = s[i+1]
	}
	return m, nil
}

// DecodeCounterOp reads a counter operation: the amount added (0 for a read)
// and whether it is a read.
func DecodeCounterOp(op []byte) (add int64, read bool, err error) {
	switch {
	case len(op) == 1 && op[0] == opGet:
		return 0, true, nil
	case len(op) >= 2 && op[0] == opAdd:
		k, n := binary.Varint(op[1:])
		if n > 0 && 1+n == len(op) {
			return k, false, nil
		}
	}
	return 0, false, errors.New("counter: malformed operation")
}

// KVOp is a decoded KV operation.
type KVOp struct {
	Kind            string // "put", "get", "delete", "cas"
	Key, Old, Value string
}

// DecodeKVOp reads a KV operation.
func DecodeKVOp(op []byte) (KVOp, error) {
	if len(op) == 0 {
		return KVOp{}, errors.New("kv: empty operation")
	}
	kinds := map[byte]struct {
		name string
		args int
	}{opPut: {"put", 2}, opGet: {"get", 1}, opDel: {"delete", 1}, opCAS: {"cas", 3}}
	k, ok := kinds[op[0]]
	if !ok {
		return KVOp{}, errors.New("kv: unknown operation")
	}
	a, err := readStrings(op[1:], k.args)
	if err != nil {
		return KVOp{}, err
	}
	o := KVOp{Kind: k.name, Key: a[0]}
	switch k.name {
	case "put":
		o.Value = a[1]
	case "cas":
		o.Old, o.Value = a[1], a[2]
	}
	return o, nil
}
