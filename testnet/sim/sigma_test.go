package sim

import (
	"fmt"
	"testing"
	"time"

	"github.com/dhtsync/dhtsync/mutex/sigma"
	"github.com/dhtsync/dhtsync/mutex/strawman"
)

// The Sigma tests run on a wide-area network: one-way delay uniform in
// [25 ms, 75 ms] (δ = 100 ms bounds it), eight replicas of which six must agree.
const (
	wanDelta = 100 * time.Millisecond
	sigmaCS  = 100 * time.Millisecond
)

func wan() Network { return Network{Delay: Uniform{25 * time.Millisecond, 75 * time.Millisecond}} }

func sigmaConfig(n, m int, grace bool) sigma.Config {
	return sigma.Config{N: n, M: m, Lease: 3 * sigmaCS, MaxDelay: wanDelta, Grace: grace}
}

func sigmaScenario(name string, cfg sigma.Config) Scenario {
	return Scenario{
		Name:     name,
		Protocol: Sigma{Config: cfg},
		Net:      wan(),
		Workload: Workload{Clients: 30, Arrivals: Poisson, Rate: 4, Requests: 1000,
			Hold: Uniform{sigmaCS / 2, 3 * sigmaCS / 2}},
		MaxTime: time.Hour,
	}
}

func TestSigmaFailureFreeNeverOverlaps(t *testing.T) {
	seeds := 200
	if testing.Short() {
		seeds = 20
	}
	for seed := range uint64(seeds) {
		m := runSeed(t, sigmaScenario("sigma-failure-free", sigmaConfig(8, 6, seed%2 == 0)), seed, safeAndComplete)
		if m.Entries < 1000 {
			t.Fatalf("seed %d: %d entries", seed, m.Entries)
		}
	}
}

// Resets at a high rate: every replica's incarnation lives 20 critical sections
// on average. With the grace period no overlap appears; without it, with
// (n, m) = (5, 3), where two reset voters are enough to break exclusion, the
// oracle finds overlaps.
func TestSigmaResetsAndTheGracePeriod(t *testing.T) {
	seeds := 100
	if testing.Short() {
		seeds = 20
	}
	run := func(n, m int, grace bool, want func(Metrics) bool) (overlaps, entries int) {
		sc := sigmaScenario(fmt.Sprintf("sigma-resets-n%d-m%d-grace-%v", n, m, grace), sigmaConfig(n, m, grace))
		sc.Faults.ResetLifetime = 20 * sigmaCS
		sc.Workload.Requests = 300
		for seed := range uint64(seeds) {
			r := runSeed(t, sc, seed, want)
			overlaps += r.Overlaps
			entries += r.Entries
		}
		t.Logf("%s: %d overlaps in %d critical sections", sc.Name, overlaps, entries)
		return overlaps, entries
	}
	run(8, 6, true, safeAndComplete)
	run(5, 3, true, safeAndComplete)
	if o, _ := run(5, 3, false, func(m Metrics) bool { return m.Completed }); o == 0 {
		t.Error("without the grace period (n, m) = (5, 3) never broke exclusion: the test cannot fail")
	}
}

// A holder that crashes inside its critical section keeps the others out for at
// most one lease: its votes expire and pass to the client waiting behind it.
// Bound: the crashed holder's last renewal reached the replicas at most δ after
// the crash, so its lease there ends by crash+δ+Lease, and the push to the next
// client takes at most δ more. Two clients, so that the one behind is the only
// candidate; with more, split votes after the expiry add their own rounds.
func TestSigmaCrashedHolderBlocksAtMostOneLease(t *testing.T) {
	cfg := sigmaConfig(8, 6, false)
	sc := sigmaScenario("sigma-crashes", cfg)
	sc.Workload = Workload{Clients: 2, Arrivals: Simultaneous, PerClient: 20, Hold: Uniform{sigmaCS / 2, sigmaCS}, CrashProb: 0.1}
	bound := cfg.Lease + 2*wanDelta
	crashes := 0
	var longest time.Duration
	for seed := range uint64(50) {
		m := runSeed(t, sc, seed, safeAndComplete)
		crashes += m.Crashes
		longest = max(longest, m.LongestCrashBlock)
		if m.LongestCrashBlock > bound {
			t.Fatalf("seed %d: a crash blocked everyone for %v > lease+2δ = %v", seed, m.LongestCrashBlock, bound)
		}
	}
	if crashes == 0 {
		t.Fatal("no holder crashed")
	}
	t.Logf("%d crashes, the longest blocked the other client for %v (lease %v)", crashes, longest, cfg.Lease)
}

// Lost messages delay acquisitions but never deadlock: informed backoff and
// renewals resend what was lost.
func TestSigmaLossNeverDeadlocks(t *testing.T) {
	for _, loss := range []float64{0.05, 0.2} {
		sc := sigmaScenario(fmt.Sprintf("sigma-loss-%v", loss), sigmaConfig(8, 6, true))
		sc.Net.Loss, sc.Net.Duplicate, sc.Net.Reorder, sc.Net.ReorderBy = loss, 0.02, 0.05, wanDelta
		sc.Workload.Requests = 300
		for seed := range uint64(30) {
			runSeed(t, sc, seed, safeAndComplete)
		}
	}
}

func TestSigmaAndStrawmanContentionFreeEntryIsOneRoundTrip(t *testing.T) {
	const oneWay = 40 * time.Millisecond
	for _, p := range []Protocol{
		Sigma{Config: sigmaConfig(8, 6, false)},
		Strawman{Config: strawman.Config{N: 8, M: 6, Lease: 3 * sigmaCS, MaxDelay: wanDelta}},
	} {
		sc := Scenario{Name: p.Name() + "-contention-free", Protocol: p, Net: Network{Delay: Constant{oneWay}},
			Workload: Workload{Clients: 1, Arrivals: Simultaneous, PerClient: 50, Hold: Constant{sigmaCS}}}
		m := runSeed(t, sc, 1, safeAndComplete)
		if m.ResponseMax != 2*oneWay || m.RoundsPerEntry != 1 {
			t.Errorf("%s: response max %v, rounds/entry %v; want one round trip %v", p.Name(), m.ResponseMax, m.RoundsPerEntry, 2*oneWay)
		}
	}
}

func TestStrawmanFailureFreeNeverOverlaps(t *testing.T) {
	sc := sigmaScenario("strawman-failure-free", sigma.Config{})
	sc.Protocol = Strawman{Config: strawman.Config{N: 8, M: 6, Lease: 3 * sigmaCS, MaxDelay: wanDelta}}
	sc.Workload.Rate, sc.Workload.Requests = 0.5, 300 // below the strawman's collapse
	for seed := range uint64(50) {
		runSeed(t, sc, seed, safeAndComplete)
	}
}

// Several resources in one run: each has its own replicas and oracle, so
// clients of different resources are inside at the same time, and none of a
// resource's clients overlaps another of the same resource.
func TestIndependentResources(t *testing.T) {
	sc := sigmaScenario("resources", sigmaConfig(8, 6, true))
	sc.Resources = 3
	sc.Workload = Workload{Clients: 9, Arrivals: Simultaneous, PerClient: 10, Hold: Constant{sigmaCS}}
	m := runSeed(t, sc, 1, safeAndComplete)
	// Three resources served in parallel take about a third of the time one
	// resource would need for the same 90 sections.
	sc.Resources = 1
	one := runSeed(t, sc, 1, safeAndComplete)
	if m.End*2 > one.End {
		t.Fatalf("3 resources took %v, 1 resource %v: the resources are not independent", m.End, one.End)
	}
}
