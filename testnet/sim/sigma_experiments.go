package sim

import (
	"fmt"
	"time"

	"github.com/dhtsync/dhtsync/core"
	"github.com/dhtsync/dhtsync/mutex/backoff"
	"github.com/dhtsync/dhtsync/mutex/sigma"
	"github.com/dhtsync/dhtsync/mutex/strawman"
	"github.com/dhtsync/dhtsync/testnet/report"
)

// The setting of the Sigma paper's experiments (papers/003 §V): one-way delay
// uniform around a 50 ms mean, eight replicas of which six must agree, clients
// that leave the critical section almost at once.
const (
	PaperMeanDelay = 50 * time.Millisecond
	PaperCS        = 20 * time.Millisecond
	PaperN, PaperM = 8, 6
	paperMaxDelay  = 100 * time.Millisecond // δ: the widest spread reaches it
	paperWindow    = 60 * time.Second       // measured: the last three quarters
	lifetimeWindow = 300 * time.Second      // long enough for long lifetimes to end
)

// PaperSpreads are the latency spreads of the throughput experiment: ±0, ±25, ±50 ms.
var PaperSpreads = []time.Duration{0, 25 * time.Millisecond, 50 * time.Millisecond}

// PaperNetwork is one-way delay uniform in [50 ms - spread, 50 ms + spread].
func PaperNetwork(spread time.Duration) Network {
	return Network{Delay: Uniform{PaperMeanDelay - spread, PaperMeanDelay + spread}}
}

// PaperSigma is Sigma in the paper's setting.
func PaperSigma() Sigma {
	return Sigma{Config: sigma.Config{N: PaperN, M: PaperM, Lease: time.Second, MaxDelay: paperMaxDelay, Grace: true}}
}

// PaperStrawman is the strawman in the paper's setting.
func PaperStrawman() Strawman {
	return Strawman{Config: strawman.Config{N: PaperN, M: PaperM, Lease: time.Second, MaxDelay: paperMaxDelay}}
}

// PaperTheory is the saturated throughput 1/(Tcs + E[handoff]) at a spread.
func PaperTheory(spread time.Duration) float64 {
	return SaturatedThroughput(PaperCS, PaperN, PaperM, PaperMeanDelay-spread, PaperMeanDelay+spread)
}

// OfferedLoad runs protocol p under Poisson requests at rate (per second) from an
// unbounded pool of clients for a measurement window, and returns the
// throughput over the window's last three quarters (the first is warm-up).
// Requests start after a second and a half, once the replicas' grace period
// (a lease of one second) is over.
func OfferedLoad(p Protocol, net Network, faults Faults, rate float64, window time.Duration, seed uint64) (float64, Metrics, error) {
	const startAt = 1500 * time.Millisecond
	requests := int(rate * window.Seconds())
	sc := Scenario{
		Name: fmt.Sprintf("%s-load-%.3g", p.Name(), rate), Protocol: p, Net: net, Faults: faults,
		Workload: Workload{Clients: requests + 1, Arrivals: Poisson, Rate: rate, Requests: requests,
			PickIdle: true, Hold: Constant{PaperCS}, StartAt: startAt},
		MaxTime: startAt + window,
	}
	m, err := Run(seed, sc, nil)
	if err != nil {
		return 0, m, err
	}
	if m.Overlaps > 0 && faults == (Faults{}) {
		return 0, m, fmt.Errorf("%s seed %d: %d overlaps without faults", sc.Name, seed, m.Overlaps)
	}
	from := core.Time(startAt + window/4)
	n := 0
	for _, at := range m.EntryTimes {
		if at >= from {
			n++
		}
	}
	return float64(n) / (window - window/4).Seconds(), m, nil
}

func meanOfferedLoad(p Protocol, net Network, faults Faults, rate float64, window time.Duration, seeds int) (float64, error) {
	var sum float64
	for seed := range uint64(seeds) {
		x, _, err := OfferedLoad(p, net, faults, rate, window, seed)
		if err != nil {
			return 0, err
		}
		sum += x
	}
	return sum / float64(seeds), nil
}

// ThroughputRates are the request rates of the throughput sweep.
var ThroughputRates = []float64{0.5, 1, 1.5, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 20}

func sigmaThroughput(seeds int) ([]report.Figure, error) {
	fig := report.Figure{
		Name:   "sigma-throughput",
		Title:  fmt.Sprintf("Throughput vs request rate (n=%d, m=%d, Tcs=%v, delay 50 ms ± spread, %d seeds)", PaperN, PaperM, PaperCS, seeds),
		XLabel: "request rate (1/s)", YLabel: "throughput (CS/s)", LegendLowRight: true,
	}
	for _, p := range []Protocol{PaperSigma(), PaperStrawman()} {
		for _, spread := range PaperSpreads {
			s := report.Series{Name: fmt.Sprintf("%s ±%v", p.Name(), spread)}
			for _, rate := range ThroughputRates {
				x, err := meanOfferedLoad(p, PaperNetwork(spread), Faults{}, rate, paperWindow, seeds)
				if err != nil {
					return nil, err
				}
				s.Points = append(s.Points, report.Point{X: rate, Y: x})
			}
			fig.Series = append(fig.Series, s)
		}
	}
	for _, spread := range PaperSpreads {
		theory := PaperTheory(spread)
		fig.Series = append(fig.Series, report.Series{Name: fmt.Sprintf("theory ±%v: %.2f", spread, theory), Dashed: true,
			Points: []report.Point{{X: ThroughputRates[0], Y: theory}, {X: ThroughputRates[len(ThroughputRates)-1], Y: theory}}})
	}
	return []report.Figure{fig}, nil
}

// Lifetimes are the replica mean lifetimes of the lifetime sweep.
var Lifetimes = []time.Duration{10 * time.Second, 30 * time.Second, 100 * time.Second, 300 * time.Second,
	1000 * time.Second, 3000 * time.Second, 10000 * time.Second}

func sigmaLifetime(seeds int) ([]report.Figure, error) {
	const spread = 25 * time.Millisecond
	theory := PaperTheory(spread)
	fig := report.Figure{
		Name:   "sigma-lifetime",
		Title:  fmt.Sprintf("Sigma throughput at 2× saturation vs replica mean lifetime (delay 50±25 ms, lease 1 s, grace on, %v runs, %d seeds)", lifetimeWindow, seeds),
		XLabel: "replica mean lifetime (s)", YLabel: "throughput (CS/s)", LogX: true,
	}
	s := report.Series{Name: "sigma"}
	for _, life := range Lifetimes {
		x, err := meanOfferedLoad(PaperSigma(), PaperNetwork(spread), Faults{ResetLifetime: life}, 2*theory, lifetimeWindow, seeds)
		if err != nil {
			return nil, err
		}
		s.Points = append(s.Points, report.Point{X: life.Seconds(), Y: x})
	}
	fig.Series = append(fig.Series, s, report.Series{Name: fmt.Sprintf("theory without resets: %.2f", theory), Dashed: true,
		Points: []report.Point{{X: Lifetimes[0].Seconds(), Y: theory}, {X: Lifetimes[len(Lifetimes)-1].Seconds(), Y: theory}}})
	return []report.Figure{fig}, nil
}

// ViolationEntries is how many critical sections each violation point runs.
const ViolationEntries = 4000

// ViolationCount is what one violation run found.
type ViolationCount struct {
	Entries, Overlaps int
	// Exposed counts the sections that lost at least 2m-n voters while inside:
	// the event the closed form P[Bin(m,p) ≥ 2m-n] gives the probability of.
	Exposed int
}

// MeasureViolations runs a saturated workload in which each replica resets
// during each critical section with probability resetP, m of n votes winning.
// Sections last 500 ms, so that waiting clients come back while the holder is
// inside (the strawman retries within 4δ = 400 ms).
func MeasureViolations(p Protocol, n, m int, resetP float64, seed uint64) (ViolationCount, error) {
	sc := Scenario{
		Name: "violations-" + p.Name(), Protocol: p, Net: PaperNetwork(25 * time.Millisecond),
		Faults:   Faults{ResetPerCS: resetP},
		Workload: Workload{Clients: 10, Arrivals: Simultaneous, PerClient: ViolationEntries / 10, Hold: Constant{500 * time.Millisecond}},
		MaxTime:  10 * time.Hour,
	}
	r, err := Run(seed, sc, nil)
	c := ViolationCount{Entries: r.Entries, Overlaps: r.Overlaps}
	for k, sections := range r.ResetVoters {
		if k >= 2*m-n {
			c.Exposed += sections
		}
	}
	return c, err
}

// ViolationProtocols are the protocols of the violation sweep for (n, m).
func ViolationProtocols(n, m int, grace bool) []Protocol {
	return []Protocol{
		Strawman{Config: strawman.Config{N: n, M: m, Lease: time.Second, MaxDelay: paperMaxDelay, Grace: grace}},
		Sigma{Config: sigma.Config{N: n, M: m, Lease: time.Second, MaxDelay: paperMaxDelay, Grace: grace}},
	}
}

// ViolationQuorums and ViolationProbabilities span the violation sweep.
var (
	ViolationQuorums       = [][2]int{{5, 3}, {7, 5}, {8, 6}}
	ViolationProbabilities = []float64{0.01, 0.02, 0.05, 0.1, 0.2}
)

func sigmaViolations(seeds int) ([]report.Figure, error) {
	var figs []report.Figure
	for _, nm := range ViolationQuorums {
		n, m := nm[0], nm[1]
		fig := report.Figure{
			Name: fmt.Sprintf("sigma-violations-n%d-m%d", n, m),
			Title: fmt.Sprintf("(n, m) = (%d, %d): per CS entry, voters lost (exposed) and overlaps, each replica resetting during a CS with probability p, %d entries",
				n, m, ViolationEntries*seeds),
			XLabel: "p", YLabel: "per CS entry", LogX: true,
		}
		formula := report.Series{Name: "P[Bin(m,p) ≥ 2m-n]", Dashed: true}
		for _, p := range ViolationProbabilities {
			formula.Points = append(formula.Points, report.Point{X: p, Y: BinomialTail(m, p, 2*m-n)})
		}
		fig.Series = append(fig.Series, formula)
		for _, grace := range []bool{false, true} {
			for _, proto := range ViolationProtocols(n, m, grace) {
				exposed := report.Series{Name: fmt.Sprintf("%s exposed", proto.Name())}
				overlaps := report.Series{Name: fmt.Sprintf("%s overlaps grace=%v", proto.Name(), grace)}
				for _, p := range ViolationProbabilities {
					var total ViolationCount
					for seed := range uint64(seeds) {
						c, err := MeasureViolations(proto, n, m, p, seed)
						if err != nil {
							return nil, err
						}
						total.Entries, total.Overlaps, total.Exposed = total.Entries+c.Entries, total.Overlaps+c.Overlaps, total.Exposed+c.Exposed
					}
					exposed.Points = append(exposed.Points, report.Point{X: p, Y: float64(total.Exposed) / float64(total.Entries)})
					overlaps.Points = append(overlaps.Points, report.Point{X: p, Y: float64(total.Overlaps) / float64(total.Entries)})
				}
				if !grace {
					fig.Series = append(fig.Series, exposed)
				}
				fig.Series = append(fig.Series, overlaps)
			}
		}
		figs = append(figs, fig)
	}
	return figs, nil
}

func mutexCosts(seeds int) ([]report.Figure, error) {
	rates := []float64{0.5, 1, 2, 4, 6}
	protocols := []Protocol{PaperStrawman(), PaperSigma(), Backoff{Config: backoff.Config{N: 6, B: 1, Lease: time.Second,
		MaxDelay: paperMaxDelay, EarlyRelease: true}}}
	msgs := report.Figure{Name: "mutex-costs-messages", Title: fmt.Sprintf("Messages per CS entry vs request rate (delay 50±25 ms, %d seeds)", seeds),
		XLabel: "request rate (1/s)", YLabel: "messages per CS entry", LogY: true}
	latency := report.Figure{Name: "mutex-costs-latency", Title: fmt.Sprintf("Entry latency in round trips (100 ms) vs request rate (delay 50±25 ms, %d seeds)", seeds),
		XLabel: "request rate (1/s)", YLabel: "mean entry latency (RTT)", LogY: true}
	for _, p := range protocols {
		ms, ls := report.Series{Name: p.Name()}, report.Series{Name: p.Name()}
		for _, rate := range rates {
			var perEntry, rtts float64
			for seed := range uint64(seeds) {
				_, m, err := OfferedLoad(p, PaperNetwork(25*time.Millisecond), Faults{}, rate, paperWindow, seed)
				if err != nil {
					return nil, err
				}
				perEntry += m.MsgsPerEntry / float64(seeds)
				rtts += m.ResponseMean.Seconds() / (2 * PaperMeanDelay).Seconds() / float64(seeds)
			}
			ms.Points = append(ms.Points, report.Point{X: rate, Y: perEntry})
			ls.Points = append(ls.Points, report.Point{X: rate, Y: rtts})
		}
		msgs.Series, latency.Series = append(msgs.Series, ms), append(latency.Series, ls)
	}
	return []report.Figure{msgs, latency}, nil
}
