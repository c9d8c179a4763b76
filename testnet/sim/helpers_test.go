package sim

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dhtsync/dhtsync/mutex/backoff"
)

const (
	lease    = 100 * time.Millisecond // Δ
	maxDelay = 10 * time.Millisecond  // δ
)

func backoffConfig() backoff.Config {
	return backoff.Config{N: 6, B: 1, Lease: lease, MaxDelay: maxDelay}
}

// withinDelta is the synchronous network of the paper: every delay at most δ.
func withinDelta() Network { return Network{Delay: Uniform{maxDelay / 10, maxDelay}} }

// runSeed runs one seed and, when the run is not what want expects, reports the
// seed, replays it with a trace to show the failure is reproducible, and keeps
// the trace as a file.
func runSeed(t *testing.T, sc Scenario, seed uint64, want func(Metrics) bool) Metrics {
	t.Helper()
	m, err := Run(seed, sc, nil)
	if err != nil {
		t.Fatalf("%s seed %d: %v", sc.Name, seed, err)
	}
	if want(m) {
		return m
	}
	var trace bytes.Buffer
	again, _ := Run(seed, sc, &trace)
	path := filepath.Join(t.TempDir(), "trace.txt")
	if dir := os.Getenv("DHTSYNC_TRACE_DIR"); dir != "" {
		path = filepath.Join(dir, sc.Name+".trace")
	}
	_ = os.WriteFile(path, trace.Bytes(), 0o644)
	t.Errorf("%s: seed %d failed: overlaps=%d completed=%v entries=%d/%d err=%q first overlap: %s\n"+
		"replayed the seed: overlaps=%d completed=%v (same failure: %v); trace in %s",
		sc.Name, seed, m.Overlaps, m.Completed, m.Entries, m.Requests, m.Error, m.FirstOverlap,
		again.Overlaps, again.Completed, again.Overlaps == m.Overlaps && again.Completed == m.Completed, path)
	return m
}

func safeAndComplete(m Metrics) bool { return m.Overlaps == 0 && m.Completed }
