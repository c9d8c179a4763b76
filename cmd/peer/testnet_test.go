package main

import (
	"strings"
	"testing"
)

func TestTestnetIsSafe(t *testing.T) {
	out, err := runPeer(t, "testnet", "--peers", "12", "--latency", "2ms", "--duration", "2s",
		"--clients", "3", "--objects", "2")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"starting 12 peers", "verdict: SAFE", "linearizable: true"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestTestnetRefusesImpossibleSetups(t *testing.T) {
	for _, args := range [][]string{
		{"testnet", "--peers", "4", "--clients", "4"},
		{"testnet", "--resources", "0"},
	} {
		if out, err := runPeer(t, args...); err == nil {
			t.Errorf("%v ran:\n%s", args, out)
		}
	}
}
