package logical

import (
	"encoding/hex"
	"strings"
	"testing"
)

// Fixed vectors (computed with sha256sum): the derivation is the wire contract
// and must never change within dhtsync/v1.
func TestReplicaKeyVectors(t *testing.T) {
	for _, v := range []struct {
		resource string
		i        int
		want     string
	}{
		{"locks/a", 0, "3a64028fd5c928196c6a84608d867f483b6dfa5d902c59f632b2aa76d7a94a3e"},
		{"locks/a", 7, "8b00b57d475709dda46cd2ba7f5b57359146b8e3cb43918a8259f3ff3781dd39"},
	} {
		k, err := ReplicaKey(v.resource, v.i)
		if err != nil || hex.EncodeToString(k[:]) != v.want {
			t.Errorf("ReplicaKey(%q, %d) = %x, %v; want %s", v.resource, v.i, k, err, v.want)
		}
	}
}

func TestReplicaKeysAreDistinct(t *testing.T) {
	keys, err := ReplicaKeys("r", 32)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[Key]bool{}
	for _, k := range keys {
		if seen[k] {
			t.Fatal("two replicas share a key")
		}
		seen[k] = true
	}
}

func TestBadResourcesAreClearErrors(t *testing.T) {
	for _, c := range []struct {
		resource string
		i        int
		want     string
	}{
		{"", 0, "empty"},
		{strings.Repeat("x", MaxResourceLen+1), 0, "exceeds"},
		{"\xff", 0, "UTF-8"},
		{"r", -1, "negative"},
	} {
		if _, err := ReplicaKey(c.resource, c.i); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ReplicaKey(%q, %d): %v, want %q", c.resource, c.i, err, c.want)
		}
	}
	if _, err := ReplicaKeys("r", 0); err == nil {
		t.Error("zero replicas accepted")
	}
}
