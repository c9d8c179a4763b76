package sim

import (
	"fmt"
	"testing"
	"time"

	"github.com/dhtsync/dhtsync/mutex/backoff"
)

// poissonScenario: 8 clients, 1,000 requests at 2/s, critical sections shorter
// than the lease, all delays within δ.
func poissonScenario(name string, cfg backoff.Config) Scenario {
	return Scenario{
		Name:     name,
		Protocol: Backoff{Config: cfg},
		Net:      withinDelta(),
		Workload: Workload{Clients: 8, Arrivals: Poisson, Rate: 2, Requests: 1000,
			Hold: Uniform{10 * time.Millisecond, 90 * time.Millisecond}},
	}
}

func TestFailureFreeNeverOverlaps(t *testing.T) {
	seeds := 200
	if testing.Short() {
		seeds = 20
	}
	entries := 0
	for seed := range uint64(seeds) {
		cfg := backoffConfig()
		cfg.EarlyRelease = seed%2 == 1 // half the seeds with early release
		m := runSeed(t, poissonScenario("failure-free", cfg), seed, safeAndComplete)
		if m.Entries < 1000 {
			t.Fatalf("seed %d: only %d entries", seed, m.Entries)
		}
		entries += m.Entries
	}
	t.Logf("%d seeds, %d critical sections, no overlap", seeds, entries)
}

func TestContentionFreeAcquireTakesOneRoundTrip(t *testing.T) {
	const oneWay = 7 * time.Millisecond
	check := func(name string, m Metrics) {
		t.Helper()
		if m.ResponseMax != 2*oneWay || m.ResponseP50 != 2*oneWay || m.RoundsPerEntry != 1 {
			t.Fatalf("%s: response p50 %v max %v rounds/entry %v, want exactly one round trip (%v) and one round",
				name, m.ResponseP50, m.ResponseMax, m.RoundsPerEntry, 2*oneWay)
		}
	}
	// The paper's protocol: a lone client's first acquisition.
	sc := Scenario{
		Name:     "contention-free",
		Protocol: Backoff{Config: backoffConfig()},
		Net:      Network{Delay: Constant{oneWay}},
		Workload: Workload{Clients: 1, Arrivals: Simultaneous},
	}
	for seed := range uint64(20) {
		check("first acquisition", runSeed(t, sc, seed, safeAndComplete))
	}
	// With early release the servers forget the grant at once, so every one of 50
	// back-to-back acquisitions of a lone client is contention-free too. (Without
	// it the client's own previous grant keeps the servers locked for Δ+2δ.)
	cfg := backoffConfig()
	cfg.EarlyRelease = true
	sc.Protocol = Backoff{Config: cfg}
	sc.Workload = Workload{Clients: 1, Arrivals: Simultaneous, PerClient: 50, Hold: Constant{time.Millisecond}}
	check("back-to-back with early release", runSeed(t, sc, 1, safeAndComplete))
}

// meanAmortizedResponse is the paper's amortized system response time for t
// clients that all contend at time 0, each holding the whole lease, averaged over
// seeds.
func meanAmortizedResponse(t *testing.T, p backoff.Policy, contenders, seeds int) time.Duration {
	t.Helper()
	cfg := backoffConfig()
	cfg.Policy = p
	sc := Scenario{
		Name:     fmt.Sprintf("contenders-%d", contenders),
		Protocol: Backoff{Config: cfg},
		Net:      withinDelta(),
		Workload: Workload{Clients: contenders, Arrivals: Simultaneous},
	}
	var sum time.Duration
	for seed := range uint64(seeds) {
		sum += runSeed(t, sc, seed, safeAndComplete).ResponseMean
	}
	return sum / time.Duration(seeds)
}

// Lemma 2: with t simultaneous contenders the amortized response time is O(Δt).
// It is also Ω(Δt): sections are serial and each holds its lease Δ, so the k-th
// entrant waits at least (k-1)Δ and the mean is at least (t-1)Δ/2. So R(t) grows
// linearly and R(2t)/R(t) tends to 2 as the fixed cost of the first rounds fades.
// Bounds: a linear R(t) = a·t + c (a, c ≥ 0) has ratio in [1, 2]; we allow 12%
// for the sampling error of a mean over 100 seeds, so ≤ 2.25, which rejects
// t·log₂t growth (its ratio 2(1+1/log₂t) is ≥ 2.4 for every t ≤ 32). From t = 4 the
// fixed cost is below a third of R(t), so the ratio is ≥ 1.5, which rejects
// √t growth (ratio 1.41).
func TestAmortizedResponseGrowsLinearly(t *testing.T) {
	seeds := 100
	if testing.Short() {
		seeds = 30
	}
	prev := meanAmortizedResponse(t, backoff.Exponential{}, 4, seeds)
	for contenders := 8; contenders <= 64; contenders *= 2 {
		cur := meanAmortizedResponse(t, backoff.Exponential{}, contenders, seeds)
		ratio := float64(cur) / float64(prev)
		perContender := cur / time.Duration(contenders)
		t.Logf("t=%2d: mean amortized response %v (%v per contender), R(t)/R(t/2) = %.2f", contenders, cur, perContender, ratio)
		if ratio < 1.5 || ratio > 2.25 {
			t.Errorf("R(%d)/R(%d) = %.2f, outside [1.5, 2.25]: growth is not linear", contenders, contenders/2, ratio)
		}
		if floor := time.Duration(contenders-1) * lease / 2; cur < floor {
			t.Errorf("t=%d: response %v below the serial floor (t-1)Δ/2 = %v: the oracle or the metric is wrong", contenders, cur, floor)
		}
		prev = cur
	}
}

func contentionScenario(name string, cfg backoff.Config, faults Faults) Scenario {
	return Scenario{
		Name:     name,
		Protocol: Backoff{Config: cfg},
		Net:      withinDelta(),
		Faults:   faults,
		Workload: Workload{Clients: 8, Arrivals: Simultaneous, PerClient: 10,
			Hold: Uniform{20 * time.Millisecond, lease}},
	}
}

func TestByzantineServersWithinBoundNeverBreakSafety(t *testing.T) {
	seeds := 40
	if testing.Short() {
		seeds = 10
	}
	for _, nb := range [][2]int{{6, 1}, {11, 2}} {
		for _, how := range Behaviours {
			cfg := backoffConfig()
			cfg.N, cfg.B = nb[0], nb[1]
			sc := contentionScenario(fmt.Sprintf("byzantine-%s-n%d-b%d", how, nb[0], nb[1]), cfg,
				Faults{Byzantine: nb[1], Behaviour: how})
			for seed := range uint64(seeds) {
				runSeed(t, sc, seed, safeAndComplete)
			}
		}
	}
}

// b+1 colluding liars that always answer FREE exceed what the quorums mask: the
// oracle must catch two clients inside at once. The same runs with b liars stay
// safe, so what the oracle catches is the extra liar.
func TestColludingLiarsBeyondBoundAreCaught(t *testing.T) {
	cfg := backoffConfig() // n=6, b=1
	caught := 0
	for seed := range uint64(20) {
		sc := contentionScenario("colluding-liars", cfg, Faults{Byzantine: cfg.B + 1, Behaviour: AlwaysFree})
		m, err := Run(seed, sc, nil)
		if err != nil {
			t.Fatal(err)
		}
		caught += m.Overlaps
		runSeed(t, contentionScenario("b-liars", cfg, Faults{Byzantine: cfg.B, Behaviour: AlwaysFree}), seed, safeAndComplete)
	}
	if caught == 0 {
		t.Fatal("b+1 colluding liars never broke exclusion in 20 seeds: the oracle or the scenario is blind")
	}
	t.Logf("b+1 liars: the oracle caught %d overlapping critical sections over 20 seeds", caught)
}
