package sim

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/dhtsync/dhtsync/core"
)

// A run exercising every source of randomness: delays, loss, duplication,
// reordering, a partition, a random liar, resets and client crashes.
func everythingScenario() Scenario {
	cfg := backoffConfig()
	cfg.EarlyRelease = true
	return Scenario{
		Name:     "everything",
		Protocol: Backoff{Config: cfg},
		Net: Network{
			Delay: Exponential{Min: time.Millisecond, MeanExtra: 4 * time.Millisecond},
			Loss:  0.02, Duplicate: 0.02, Reorder: 0.05, ReorderBy: 5 * time.Millisecond,
			Partitions: []Partition{{From: core.Time(time.Second), Until: core.Time(2 * time.Second),
				Isolated: []core.Addr{core.ReplicaAddr(5)}}},
		},
		Faults:   Faults{Byzantine: 1, Behaviour: RandomAnswer},
		Workload: Workload{Clients: 6, Arrivals: Poisson, Rate: 4, Requests: 200, Hold: Uniform{5 * time.Millisecond, 60 * time.Millisecond}, CrashProb: 0.02},
	}
}

func TestSameSeedGivesByteIdenticalTrace(t *testing.T) {
	sc := everythingScenario()
	var a, b, c bytes.Buffer
	ma, _ := Run(42, sc, &a)
	mb, _ := Run(42, sc, &b)
	Run(43, sc, &c)
	if a.Len() == 0 || !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatalf("seed 42 gave different traces (%d vs %d bytes)", a.Len(), b.Len())
	}
	if bytes.Equal(a.Bytes(), c.Bytes()) {
		t.Fatal("seeds 42 and 43 gave the same trace: the seed does not drive the run")
	}
	for _, kind := range []string{" recv ", " drop ", " wake ", " event ", " crash "} {
		if !strings.Contains(a.String(), kind) {
			t.Errorf("trace has no %q line: the scenario does not exercise it", kind)
		}
	}
	ma.Wall, mb.Wall = 0, 0
	if ma.Entries != mb.Entries || ma.Messages != mb.Messages || ma.ResponseMean != mb.ResponseMean {
		t.Fatalf("same seed, different metrics: %+v vs %+v", ma, mb)
	}
}

func TestBadScenariosAreErrors(t *testing.T) {
	good := everythingScenario()
	bad := map[string]func(*Scenario){
		"no clients":       func(s *Scenario) { s.Workload.Clients = 0 },
		"poisson no rate":  func(s *Scenario) { s.Workload.Rate = 0 },
		"loss above one":   func(s *Scenario) { s.Net.Loss = 1.5 },
		"too many liars":   func(s *Scenario) { s.Faults.Byzantine = 7 },
		"liar no behavior": func(s *Scenario) { s.Faults.Behaviour = "" },
		"no protocol":      func(s *Scenario) { s.Protocol = nil },
		"impossible n, b": func(s *Scenario) {
			cfg := backoffConfig()
			cfg.N = 5
			s.Protocol = Backoff{Config: cfg}
		},
	}
	for name, spoil := range bad {
		sc := good
		spoil(&sc)
		if _, err := Run(1, sc, nil); err == nil {
			t.Errorf("%s: Run accepted it", name)
		}
	}
	if _, err := ParseBehaviour("sneaky"); err == nil || !strings.Contains(err.Error(), "known:") {
		t.Errorf("unknown behaviour: %v", err)
	}
}
