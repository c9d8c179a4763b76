package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runPeer(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := newRootCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

func TestSimDefaultScenarioIsSafe(t *testing.T) {
	out, err := runPeer(t, "sim")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"scenario    failure-free", "verdict     SAFE", "replay      peer sim failure-free --seed 1"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestSimTraceReplaysByteForByte(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, path := range []string{a, b} {
		if _, err := runPeer(t, "sim", "lossy", "--seed", "9", "--trace", path); err != nil {
			t.Fatal(err)
		}
	}
	ta, _ := os.ReadFile(a)
	tb, _ := os.ReadFile(b)
	if len(ta) == 0 || !bytes.Equal(ta, tb) {
		t.Fatalf("traces of the same seed differ (%d vs %d bytes)", len(ta), len(tb))
	}
}

func TestSimFlagsChangeTheRun(t *testing.T) {
	out, err := runPeer(t, "sim", "contention", "--clients", "3", "--n", "11", "--b", "2", "--policy", "polynomial-2", "--seeds", "2")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "n=11 b=2") || !strings.Contains(out, "polynomial-2") || !strings.Contains(out, "0 overlapping critical sections") {
		t.Fatalf("flags not applied:\n%s", out)
	}
}

func TestSimBadInputIsAClearError(t *testing.T) {
	cases := map[string][]string{
		"unknown scenario":  {"sim", "nope"},
		"n < 5b+1":          {"sim", "--n", "5"},
		"unknown behaviour": {"sim", "--byzantine", "1", "--behaviour", "sneaky"},
		"unknown policy":    {"sim", "--policy", "linear"},
		"no clients":        {"sim", "--clients", "0"},
		"zero seeds":        {"sim", "--seeds", "0"},
		"trace many seeds":  {"sim", "--seeds", "2", "--trace", "x"},
		"unknown sweep":     {"sim", "sweep", "nope"},
		"bad loss":          {"sim", "--loss", "2"},
	}
	for name, args := range cases {
		if _, err := runPeer(t, args...); err == nil {
			t.Errorf("%s: %v accepted", name, args)
		}
	}
}
