package classic

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/dhtsync/dhtsync/testnet/sim"
)

func scenario(p Protocol, seed uint64) sim.Scenario {
	return sim.Scenario{
		Name: fmt.Sprintf("%s-n%d", p.Kind, p.N), Protocol: p,
		Net: sim.Network{Delay: sim.Uniform{Lo: 25 * time.Millisecond, Hi: 75 * time.Millisecond}, FIFO: true},
		Workload: sim.Workload{Clients: p.N, Arrivals: sim.Poisson, Rate: 5, Requests: 300,
			Hold: sim.Uniform{Lo: 10 * time.Millisecond, Hi: 50 * time.Millisecond}},
		MaxTime: time.Hour,
	}
}

func TestClassicAlgorithmsAreSafeAndLive(t *testing.T) {
	seeds := 100
	if testing.Short() {
		seeds = 10
	}
	for _, kind := range Kinds {
		if kind == Maekawa {
			continue // deadlocks; see below
		}
		for _, n := range []int{1, 3, 9, 10} {
			p := Protocol{Kind: kind, N: n}
			for seed := range uint64(seeds) {
				m, err := sim.Run(seed, scenario(p, seed), nil)
				if err != nil {
					t.Fatal(err)
				}
				if m.Overlaps > 0 || !m.Completed {
					t.Fatalf("%s n=%d seed %d: overlaps %d completed %v (%d/%d entries) %s",
						kind, n, seed, m.Overlaps, m.Completed, m.Entries, m.Requests, m.FirstOverlap)
				}
			}
		}
	}
}

// The slides' example: V1={p1,p2}, V2={p2,p3}, V3={p3,p1}, all three ask at
// once. Each votes for itself first, then waits for the next one's vote: a
// cycle. The fix (timestamps, inquire, relinquish) breaks it.
func TestMaekawaDeadlocksOnTheSlidesExampleAndTheFixDoesNot(t *testing.T) {
	sets := [][]int{{0, 1}, {1, 2}, {2, 0}}
	for _, kind := range []Kind{Maekawa, MaekawaFixed} {
		sc := sim.Scenario{Name: string(kind), Protocol: Protocol{Kind: kind, N: 3, Sets: sets},
			Net:      sim.Network{Delay: sim.Constant{D: 50 * time.Millisecond}},
			Workload: sim.Workload{Clients: 3, Arrivals: sim.Simultaneous, Hold: sim.Constant{D: 10 * time.Millisecond}},
			MaxTime:  time.Minute}
		m, err := sim.Run(1, sc, nil)
		if err != nil {
			t.Fatal(err)
		}
		deadlocked := m.Entries == 0 && !m.Completed
		if deadlocked != (kind == Maekawa) || m.Overlaps > 0 {
			t.Fatalf("%s: %d entries of 3, completed %v, overlaps %d", kind, m.Entries, m.Completed, m.Overlaps)
		}
		t.Logf("%s: %d of 3 processes entered", kind, m.Entries)
	}
}

// On the grid under contention the unfixed algorithm deadlocks (safely: no
// overlap while it runs); the fixed one completes every run.
func TestMaekawaOnTheGridUnderContention(t *testing.T) {
	for _, kind := range []Kind{Maekawa, MaekawaFixed} {
		for _, n := range []int{9, 16, 30} {
			deadlocks := 0
			for seed := range uint64(20) {
				sc := scenario(Protocol{Kind: kind, N: n}, seed)
				sc.Workload = sim.Workload{Clients: n, Arrivals: sim.Simultaneous, PerClient: 10, Hold: sim.Constant{D: 10 * time.Millisecond}}
				m, err := sim.Run(seed, sc, nil)
				if err != nil || m.Overlaps > 0 {
					t.Fatalf("%s n=%d seed %d: err %v overlaps %d", kind, n, seed, err, m.Overlaps)
				}
				if !m.Completed {
					deadlocks++
				}
			}
			t.Logf("%s n=%d: %d of 20 contended runs deadlocked", kind, n, deadlocks)
			if (deadlocks > 0) != (kind == Maekawa) {
				t.Errorf("%s n=%d: %d deadlocks in 20 runs", kind, n, deadlocks)
			}
		}
	}
}

func TestGridSetsIntersect(t *testing.T) {
	for n := 1; n <= 60; n++ {
		sets := GridSets(n)
		for i := range sets {
			if !contains(sets[i], i) {
				t.Fatalf("n=%d: process %d not in its own set", n, i)
			}
			for j := range sets {
				if !intersects(sets[i], sets[j]) {
					t.Fatalf("n=%d: sets %d and %d are disjoint", n, i, j)
				}
			}
		}
	}
}

func contains(s []int, x int) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

func intersects(a, b []int) bool {
	for _, x := range a {
		if contains(b, x) {
			return true
		}
	}
	return false
}

// Without contention the message counts are the textbook formulas exactly:
// centralized 3, Ricart–Agrawala 2(N-1), Lamport 3(N-1), and for Maekawa on the
// grid 3(K-1) with K = 2√N-1 the voting set (the node's own vote needs no
// message). That is about 6√N, not Maekawa's 3√N: his bound uses sets of about
// √N from finite projective planes, which exist only for some N. Every entry
// takes two message times (request, grant); under saturation the next process
// enters one message time after a release for Lamport, Ricart–Agrawala and the
// ring, two for the centralized server and (at most) for Maekawa.
func TestCostsMatchTheTextbookFormulas(t *testing.T) {
	for _, n := range []int{4, 9, 16, 25, 64} {
		k := 1
		for k*k < n {
			k++
		}
		want := map[Kind]float64{
			Centralized:    3,
			RicartAgrawala: float64(2 * (n - 1)),
			LamportKind:    float64(3 * (n - 1)),
			MaekawaFixed:   float64(3 * (2*k - 2)),
		}
		sync := map[Kind]float64{Centralized: 2, RicartAgrawala: 1, LamportKind: 1, TokenRingKind: 1, MaekawaFixed: 2}
		for kind, msgs := range want {
			p := Protocol{Kind: kind, N: n}
			low, err := LowLoad(p, n, 1)
			if err != nil || !low.Completed || low.Overlaps > 0 {
				t.Fatalf("%s n=%d: %v %+v", kind, n, err, low)
			}
			if low.MsgsPerEntry != msgs {
				t.Errorf("%s n=%d: %.2f messages per entry, want %v", kind, n, low.MsgsPerEntry, msgs)
			}
			if low.ResponseMax != 2*OneWay {
				t.Errorf("%s n=%d: entry delay %v, want two message times", kind, n, low.ResponseMax)
			}
		}
		for kind, want := range sync {
			sat, err := Saturated(Protocol{Kind: kind, N: n}, n, nil, 1)
			if err != nil || !sat.Completed || sat.Overlaps > 0 {
				t.Fatalf("%s n=%d saturated: %v %+v", kind, n, err, sat)
			}
			got := sat.HandoffMean.Seconds() / OneWay.Seconds()
			if (kind == MaekawaFixed && got > want+1e-9) || (kind != MaekawaFixed && math.Abs(got-want) > 1e-9) {
				t.Errorf("%s n=%d: synchronization delay %.3f message times, want %v", kind, n, got, want)
			}
		}
	}
}
