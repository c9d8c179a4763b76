package sim

import (
	"fmt"
	"github.com/dhtsync/dhtsync/core"
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
	response := func(contenders int) time.Duration {
		cfg := backoffConfig()
		cfg.Policy = backoff.Exponential{}
		r, err := AmortizedResponse(cfg, contenders, seeds)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	prev := response(4)
	for contenders := 8; contenders <= 64; contenders *= 2 {
		cur := response(contenders)
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

// What safe mode changes when delays exceed δ (asynchrony). Two readings of the
// lease are compared:
//   - the paper's Lemma 1, Δ from when contend returns (AnchorAtReturn): a late
//     quorum starts a lease long after the grants it rests on, so without safe
//     mode two clients end up inside at once; safe mode drops replies older than
//     2δ and restores exclusion;
//   - dhtsync's default, Δ from when the winning round was sent: exclusion holds
//     with or without safe mode, because a correct server in both winners'
//     quorums granted them Δ+2δ apart whatever the delays. There, safe mode
//     changes liveness, not safety: without it a late quorum yields a lease that
//     is mostly spent on arrival; with it such rounds are retried, so every lease
//     has at least Δ-2δ left, paid for with more rounds per entry.
func TestAsynchronyAndSafeMode(t *testing.T) {
	// Within δ, except that one message in ten is late by up to 10δ.
	async := withinDelta()
	async.Reorder, async.ReorderBy = 0.1, 10*maxDelay
	run := func(anchorAtReturn, safe bool) (overlaps int, usableMin time.Duration, rounds float64) {
		cfg := backoffConfig()
		cfg.AnchorAtReturn, cfg.SafeMode = anchorAtReturn, safe
		if !safe {
			cfg.RoundTimeout = 20 * maxDelay // as in the paper, wait long for the quorum
		}
		sc := contentionScenario(fmt.Sprintf("async-return%v-safe%v", anchorAtReturn, safe), cfg, Faults{})
		sc.Net = async
		sc.Workload.Hold = nil // every client uses its whole lease
		usableMin = lease
		for seed := range uint64(30) {
			m, err := Run(seed, sc, nil)
			if err != nil || !m.Completed {
				t.Fatalf("%s seed %d: err %v completed %v: %+v", sc.Name, seed, err, m.Completed, m)
			}
			overlaps += m.Overlaps
			usableMin = min(usableMin, m.UsableMin)
			rounds += m.RoundsPerEntry / 30
		}
		t.Logf("%-28s overlaps %3d  least usable lease %-12v rounds/entry %.2f", sc.Name, overlaps, usableMin, rounds)
		return overlaps, usableMin, rounds
	}
	if o, _, _ := run(true, false); o == 0 {
		t.Error("the paper's return-anchored lease without safe mode survived delays of 10δ: the test no longer shows what safe mode fixes")
	}
	if o, _, _ := run(true, true); o != 0 {
		t.Errorf("return-anchored lease with safe mode: %d overlaps", o)
	}
	o, usableNoSafe, roundsNoSafe := run(false, false)
	if o != 0 {
		t.Errorf("send-anchored lease without safe mode: %d overlaps", o)
	}
	o, usableSafe, roundsSafe := run(false, true)
	if o != 0 {
		t.Errorf("send-anchored lease with safe mode: %d overlaps", o)
	}
	if usableSafe < lease-2*maxDelay || usableNoSafe >= lease-2*maxDelay {
		t.Errorf("least usable lease: %v with safe mode (want ≥ Δ-2δ), %v without (want < Δ-2δ)", usableSafe, usableNoSafe)
	}
	if roundsSafe <= roundsNoSafe {
		t.Errorf("safe mode should cost rounds under asynchrony: %.2f vs %.2f rounds/entry", roundsSafe, roundsNoSafe)
	}
}

// meanOver runs sc over seeds (all must be safe and complete) and averages f.
func meanOver(t *testing.T, sc Scenario, seeds int, f func(Metrics) float64) float64 {
	t.Helper()
	var sum float64
	for seed := range uint64(seeds) {
		sum += f(runSeed(t, sc, seed, safeAndComplete))
	}
	return sum / float64(seeds)
}

func responseSeconds(m Metrics) float64 { return m.ResponseMean.Seconds() }

// Symmetry breaking (§5): a client that never grows its backoff re-enters sooner
// than the clients that back off, and sooner than it did as one of them.
func TestPersistentClientIsServedFaster(t *testing.T) {
	sc := contentionScenario("persistent", backoffConfig(), Faults{})
	favoured := func(m Metrics) float64 { return m.ResponseByClient["c0000"].Seconds() }
	others := func(m Metrics) float64 {
		var sum float64
		for id, r := range m.ResponseByClient {
			if id != "c0000" {
				sum += r.Seconds()
			}
		}
		return sum / float64(len(m.ResponseByClient)-1)
	}
	before := meanOver(t, sc, 30, favoured)
	sc.Protocol = Backoff{Config: backoffConfig(), PerClient: func(id core.ClientID, cfg *backoff.Config) {
		cfg.Persistent = id == "c0000"
	}}
	after, rest := meanOver(t, sc, 30, favoured), meanOver(t, sc, 30, others)
	t.Logf("c0000 mean response: %.3fs symmetric, %.3fs persistent (others %.3fs)", before, after, rest)
	if after >= before/2 || after >= rest/2 {
		t.Errorf("persistent client not served at least twice as fast: %.3fs vs %.3fs before and %.3fs for the others", after, before, rest)
	}
}

// Delayed reply list (§5): a try that finds the server locked waits there and is
// answered the moment the lock ends, so contenders back off less often.
func TestDelayedRepliesCutRounds(t *testing.T) {
	sc := contentionScenario("delayed-replies", backoffConfig(), Faults{})
	plainRounds := meanOver(t, sc, 30, func(m Metrics) float64 { return m.RoundsPerEntry })
	plainResp := meanOver(t, sc, 30, responseSeconds)
	cfg := backoffConfig()
	cfg.DelayedReplies = true
	sc.Protocol = Backoff{Config: cfg}
	delayedRounds := meanOver(t, sc, 30, func(m Metrics) float64 { return m.RoundsPerEntry })
	delayedResp := meanOver(t, sc, 30, responseSeconds)
	t.Logf("rounds/entry %.2f → %.2f, mean response %.3fs → %.3fs with delayed replies", plainRounds, delayedRounds, plainResp, delayedResp)
	if delayedRounds >= plainRounds || delayedResp >= plainResp {
		t.Errorf("delayed replies did not cut rounds and response time")
	}
}

// Per-call Δ (§5): clients that ask for short leases free the resource sooner;
// mixing lease lengths keeps exclusion, since each server's lock window follows
// the lease it last granted.
func TestPerCallLease(t *testing.T) {
	sc := contentionScenario("per-call-lease", backoffConfig(), Faults{})
	sc.Workload.Hold = nil // hold the whole lease
	long := meanOver(t, sc, 30, responseSeconds)
	sc.Workload.Lease = Uniform{lease / 4, lease / 2} // above the round trip 2δ
	mixed := meanOver(t, sc, 30, responseSeconds)
	t.Logf("mean response %.3fs with Δ=%v, %.3fs with Δ uniform in [Δ/4, Δ/2]", long, lease, mixed)
	if mixed >= long*0.75 {
		t.Errorf("shorter per-call leases did not cut the response time by a quarter: %.3fs vs %.3fs", mixed, long)
	}
}

// Early release: servers forget the grant when its holder leaves, so short
// critical sections no longer cost a whole lock window.
func TestEarlyReleaseRaisesThroughput(t *testing.T) {
	sc := poissonScenario("early-release", backoffConfig())
	sc.Workload.Rate, sc.Workload.Requests = 20, 300 // far above the paper protocol's capacity
	throughput := func(m Metrics) float64 { return m.Throughput }
	plain := meanOver(t, sc, 10, throughput)
	cfg := backoffConfig()
	cfg.EarlyRelease = true
	sc.Protocol = Backoff{Config: cfg}
	early := meanOver(t, sc, 10, throughput)
	t.Logf("saturated throughput %.2f/s without, %.2f/s with early release", plain, early)
	if early < 1.3*plain {
		t.Errorf("early release raised throughput only from %.2f to %.2f entries/s", plain, early)
	}
}

// Replica resets (state wiped, exponentially distributed lifetimes). Without the
// grace period a reset replica forgets its grant and says FREE, and once more
// than b replicas of a quorum reset inside one lock window exclusion breaks; with
// it a new incarnation stays locked for one maximum lease and no overlap remains.
// The grace period costs liveness when resets are this frequent (a replica spends
// half its life in grace), so completion is asserted at a tenth of the rate.
func TestResetsNeedTheGracePeriod(t *testing.T) {
	window := lease + 2*maxDelay
	run := func(grace bool, lifetime time.Duration, want func(Metrics) bool) (overlaps, entries int) {
		cfg := backoffConfig()
		cfg.Grace = grace
		sc := contentionScenario(fmt.Sprintf("resets-grace-%v-lifetime-%v", grace, lifetime), cfg, Faults{ResetLifetime: lifetime})
		sc.Workload.Hold = nil
		sc.MaxTime = 10 * time.Minute
		for seed := range uint64(40) {
			m := runSeed(t, sc, seed, want)
			overlaps += m.Overlaps
			entries += m.Entries
		}
		t.Logf("%s: %d overlaps in %d critical sections over 40 seeds", sc.Name, overlaps, entries)
		return overlaps, entries
	}
	anyOutcome := func(Metrics) bool { return true }
	safe := func(m Metrics) bool { return m.Overlaps == 0 }
	if off, _ := run(false, 2*window, anyOutcome); off == 0 {
		t.Error("resets never broke exclusion without the grace period: the scenario does not test the grace period")
	}
	if _, entries := run(true, 2*window, safe); entries < 40*40 {
		t.Errorf("with the grace period only %d critical sections in 40 seeds at the high reset rate", entries)
	}
	run(true, 20*window, safeAndComplete)
}

// A client that crashes inside its critical section blocks the others for at
// most its lock window, and exclusion holds.
func TestClientCrashes(t *testing.T) {
	sc := contentionScenario("client-crashes", backoffConfig(), Faults{})
	sc.Workload.CrashProb = 0.2
	crashes := 0
	for seed := range uint64(30) {
		crashes += runSeed(t, sc, seed, safeAndComplete).Crashes
	}
	if crashes == 0 {
		t.Fatal("no client crashed: the scenario does not test crashes")
	}
}

// Loss, duplication, reordering and a partition that cuts more than b replicas
// off for five seconds: exclusion holds throughout, and every request is served
// once the partition heals.
func TestLossyNetworkAndPartition(t *testing.T) {
	for _, early := range []bool{false, true} {
		cfg := backoffConfig()
		cfg.EarlyRelease = early
		sc := contentionScenario(fmt.Sprintf("lossy-early-%v", early), cfg, Faults{})
		sc.Net.Loss, sc.Net.Duplicate, sc.Net.Reorder, sc.Net.ReorderBy = 0.05, 0.05, 0.1, maxDelay
		sc.Net.Partitions = []Partition{{From: core.Time(time.Second), Until: core.Time(6 * time.Second),
			Isolated: []core.Addr{core.ReplicaAddr(0), core.ReplicaAddr(1)}}}
		for seed := range uint64(30) {
			m := runSeed(t, sc, seed, safeAndComplete)
			if m.End < core.Time(6*time.Second) {
				t.Fatalf("seed %d ended at %v, before the partition healed: it does not test the partition", seed, m.End)
			}
		}
	}
}
