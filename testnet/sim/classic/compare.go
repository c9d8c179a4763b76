package classic

import (
	"fmt"
	"time"

	"github.com/dhtsync/dhtsync/core"
	"github.com/dhtsync/dhtsync/mutex/backoff"
	"github.com/dhtsync/dhtsync/mutex/sigma"
	"github.com/dhtsync/dhtsync/mutex/strawman"
	"github.com/dhtsync/dhtsync/testnet/report"
	"github.com/dhtsync/dhtsync/testnet/sim"
)

// The comparison runs every algorithm on the same network: a constant one-way
// delay of 50 ms (so delays count exactly in message times), FIFO links (the
// classic algorithms assume them), critical sections of 10 ms. Requests start
// after two seconds, once a new Sigma replica's grace period is over, and a
// failure strikes one second later.
const (
	OneWay    = 50 * time.Millisecond
	compareCS = 10 * time.Millisecond
	warmUp    = 2 * time.Second
)

// Participants are the process counts of the comparison.
var Participants = []int{4, 8, 16, 32, 64, 128, 256}

// Compared is one algorithm of the comparison, for n processes.
type Compared struct {
	Name     string
	Protocol func(n int) sim.Protocol
	// Replicated protocols fail a replica in the failure runs; the others fail
	// one of the processes (the centralized one fails its server).
	Replicated bool
}

// ComparedAlgorithms are the classic algorithms and dhtsync's three.
func ComparedAlgorithms() []Compared {
	classic := func(k Kind) func(int) sim.Protocol {
		return func(n int) sim.Protocol { return Protocol{Kind: k, N: n} }
	}
	return []Compared{
		{"centralized", classic(Centralized), true},
		{"token-ring", classic(TokenRingKind), false},
		{"lamport", classic(LamportKind), false},
		{"ricart-agrawala", classic(RicartAgrawala), false},
		{"maekawa-fixed", classic(MaekawaFixed), false},
		{"backoff", func(int) sim.Protocol {
			// Δ a little above the round trip 2δ: sections are short, and the
			// backoff sleeps at least Δ+4δ.
			return sim.Backoff{Config: backoff.Config{N: 6, B: 1, Lease: 3 * OneWay, MaxDelay: OneWay, EarlyRelease: true}}
		}, true},
		{"strawman", func(int) sim.Protocol {
			return sim.Strawman{Config: strawman.Config{N: 8, M: 6, Lease: time.Second, MaxDelay: OneWay}}
		}, true},
		{"sigma", func(int) sim.Protocol {
			return sim.Sigma{Config: sigma.Config{N: 8, M: 6, Lease: time.Second, MaxDelay: OneWay, Grace: true}}
		}, true},
	}
}

func compareNet() sim.Network { return sim.Network{Delay: sim.Constant{D: OneWay}, FIFO: true} }

// LowLoad runs each of n processes once, one request per second, so that no
// two ever contend: the contention-free message count and entry delay.
func LowLoad(p sim.Protocol, n int, seed uint64) (sim.Metrics, error) {
	return sim.Run(seed, sim.Scenario{Name: "low-load", Protocol: p, Net: compareNet(),
		Workload: sim.Workload{Clients: n, Arrivals: sim.Spaced, Rate: 1, Requests: n, Hold: sim.Constant{D: compareCS}, StartAt: warmUp},
		MaxTime:  time.Duration(n+10) * time.Second * 10}, nil)
}

// Saturated has every process ask again as soon as it leaves.
func Saturated(p sim.Protocol, n int, fail *sim.Failure, seed uint64) (sim.Metrics, error) {
	per := max(2, 512/n)
	return sim.Run(seed, sim.Scenario{Name: "saturated", Protocol: p, Net: compareNet(),
		Faults:   sim.Faults{Fail: fail},
		Workload: sim.Workload{Clients: n, Arrivals: sim.Simultaneous, PerClient: per, Hold: sim.Constant{D: compareCS}, StartAt: warmUp},
		MaxTime:  10 * time.Minute}, nil)
}

// Outcome codes of the failure figures.
const (
	OutcomeServed  = 1  // every surviving request served, no overlap
	OutcomeBlocked = 0  // some surviving request never served
	OutcomeBroken  = -1 // two processes inside at once
)

func outcome(m sim.Metrics) float64 {
	switch {
	case m.Overlaps > 0:
		return OutcomeBroken
	case m.Completed:
		return OutcomeServed
	}
	return OutcomeBlocked
}

// Failing is the participant a failure run fails.
func Failing(c Compared, reset bool) *sim.Failure {
	f := &sim.Failure{At: core.Time(warmUp + time.Second), Replica: -1, Client: 1, Reset: reset}
	if c.Replicated {
		f.Replica = 0
	}
	return f
}

func classicComparison(seeds int) ([]report.Figure, error) {
	figs := []report.Figure{
		{Name: "classic-messages", Title: "Messages per CS entry without contention", XLabel: "processes N", YLabel: "messages per entry", LogX: true, LogY: true},
		{Name: "classic-entry-delay", Title: "Entry delay without contention, in one-way delays (50 ms)", XLabel: "processes N", YLabel: "one-way delays", LogX: true, LogY: true},
		{Name: "classic-sync-delay", Title: "Synchronization delay under saturation, in one-way delays", XLabel: "processes N", YLabel: "one-way delays", LogX: true, LogY: true},
		{Name: "classic-throughput", Title: "Throughput at saturation (CS of 10 ms)", XLabel: "processes N", YLabel: "CS per second", LogX: true, LogY: true},
		{Name: "classic-crash", Title: "After one participant crashes at 1 s: 1 served, 0 blocked, -1 exclusion broken", XLabel: "processes N", YLabel: "outcome", LogX: true},
		{Name: "classic-reset", Title: "After one participant resets at 1 s: 1 served, 0 blocked, -1 exclusion broken", XLabel: "processes N", YLabel: "outcome", LogX: true},
	}
	for _, c := range ComparedAlgorithms() {
		series := make([]report.Series, len(figs))
		for i := range series {
			series[i].Name = c.Name
		}
		for _, n := range Participants {
			var msgs, entry, syncd, thr, crash, reset float64
			for seed := range uint64(seeds) {
				low, err := LowLoad(c.Protocol(n), n, seed)
				if err != nil {
					return nil, err
				}
				sat, err := Saturated(c.Protocol(n), n, nil, seed)
				if err != nil {
					return nil, err
				}
				if low.Overlaps+sat.Overlaps > 0 || !low.Completed || !sat.Completed {
					return nil, fmt.Errorf("%s n=%d seed %d: overlaps %d/%d completed %v/%v", c.Name, n, seed,
						low.Overlaps, sat.Overlaps, low.Completed, sat.Completed)
				}
				crashed, err := Saturated(c.Protocol(n), n, Failing(c, false), seed)
				if err != nil {
					return nil, err
				}
				wiped, err := Saturated(c.Protocol(n), n, Failing(c, true), seed)
				if err != nil {
					return nil, err
				}
				k := float64(seeds)
				msgs += low.MsgsPerEntry / k
				entry += low.ResponseMean.Seconds() / OneWay.Seconds() / k
				syncd += sat.HandoffMean.Seconds() / OneWay.Seconds() / k
				thr += sat.Throughput / k
				crash += outcome(crashed) / k
				reset += outcome(wiped) / k
			}
			for i, y := range []float64{msgs, entry, syncd, thr, crash, reset} {
				series[i].Points = append(series[i].Points, report.Point{X: float64(n), Y: y})
			}
		}
		for i := range figs {
			figs[i].Series = append(figs[i].Series, series[i])
		}
	}
	return figs, nil
}

// Experiments are the classic sweeps, for `peer sim sweep`.
func Experiments() []sim.Experiment {
	return []sim.Experiment{{
		Name:         "classic-comparison",
		Summary:      "classic algorithms vs backoff, strawman and Sigma for N = 4…256: messages, entry and sync delay, saturated throughput, crash and reset",
		DefaultSeeds: 1,
		Run:          classicComparison,
	}}
}
