package sim

import (
	"fmt"
	"time"

	"github.com/dhtsync/dhtsync/mutex/backoff"
	"github.com/dhtsync/dhtsync/testnet/report"
)

// Experiment is a sweep over scenarios whose results are figures for
// BENCHMARKS.md, runnable as `peer sim sweep NAME`.
type Experiment struct {
	Name    string
	Summary string
	// DefaultSeeds is how many seeds per point `peer sim sweep` uses by default.
	DefaultSeeds int
	Run          func(seeds int) ([]report.Figure, error)
}

// Experiments lists the sweeps.
func Experiments() []Experiment {
	return []Experiment{
		{"backoff-policies", "amortized response time vs t simultaneous contenders, exponential vs polynomial backoff", 100, backoffPolicies},
		{"sigma-throughput", "Sigma and strawman throughput vs Poisson request rate at three latency spreads, against 1/(Tcs+E[handoff])", 3, sigmaThroughput},
		{"sigma-lifetime", "Sigma throughput at twice saturation vs replica mean lifetime (exponential resets, grace period on)", 3, sigmaLifetime},
		{"sigma-violations", "exclusivity violations per CS entry vs (n, m) and per-CS reset probability, grace off and on, against P[Bin(m,p) ≥ 2m-n]", 1, sigmaViolations},
		{"mutex-costs", "messages per CS entry and entry latency in round trips: strawman, Sigma, backoff mutex, low to high load", 3, mutexCosts},
		{"ordering-throughput", "ordering protocol: operations per second, messages per operation and batch size vs concurrent submitters", 2, orderingThroughput},
	}
}

// AmortizedResponse is the paper's amortized system response time: the mean
// time to enter for t clients that all contend at time 0, each holding its whole
// lease, averaged over seeds 0..seeds-1 with delays within δ. Any seed that
// breaks exclusion or does not complete is an error naming the seed.
func AmortizedResponse(cfg backoff.Config, t, seeds int) (time.Duration, error) {
	sc := Scenario{
		Name:     fmt.Sprintf("contenders-%d-%s", t, cfg.Policy.Name()),
		Protocol: Backoff{Config: cfg},
		Net:      Network{Delay: Uniform{cfg.MaxDelay / 10, cfg.MaxDelay}},
		Workload: Workload{Clients: t, Arrivals: Simultaneous},
	}
	var sum time.Duration
	for seed := range uint64(seeds) {
		m, err := Run(seed, sc, nil)
		if err != nil {
			return 0, err
		}
		if m.Overlaps > 0 || !m.Completed {
			return 0, fmt.Errorf("%s seed %d: overlaps %d, completed %v", sc.Name, seed, m.Overlaps, m.Completed)
		}
		sum += m.ResponseMean
	}
	return sum / time.Duration(seeds), nil
}

// ContenderCounts are the t of the backoff-policies sweep.
var ContenderCounts = []int{1, 2, 4, 8, 16, 32, 64}

func backoffPolicies(seeds int) ([]report.Figure, error) {
	fig := report.Figure{
		Name:   "backoff-policies",
		Title:  fmt.Sprintf("Backoff mutex: amortized response time (n=6, b=1, Δ=%v, δ=%v, %d seeds)", DefaultLease, DefaultMaxDelay, seeds),
		XLabel: "contenders t", YLabel: "mean response (s)",
	}
	for _, p := range []backoff.Policy{backoff.Exponential{}, backoff.Polynomial{Degree: 2}, backoff.Polynomial{Degree: 3}} {
		cfg := DefaultBackoff()
		cfg.Policy = p
		s := report.Series{Name: p.Name()}
		for _, t := range ContenderCounts {
			r, err := AmortizedResponse(cfg, t, seeds)
			if err != nil {
				return nil, err
			}
			s.Points = append(s.Points, report.Point{X: float64(t), Y: r.Seconds()})
		}
		fig.Series = append(fig.Series, s)
	}
	floor := report.Series{Name: "serial floor (t-1)Δ/2", Dashed: true}
	for _, t := range ContenderCounts {
		floor.Points = append(floor.Points, report.Point{X: float64(t), Y: (time.Duration(t-1) * DefaultLease / 2).Seconds()})
	}
	fig.Series = append(fig.Series, floor)
	return []report.Figure{fig}, nil
}
