package sim

import (
	"fmt"
	"time"

	"github.com/dhtsync/dhtsync/mutex/backoff"
	"github.com/dhtsync/dhtsync/ordering"
	"github.com/dhtsync/dhtsync/testnet/report"
)

// Submitters are the concurrency levels of the ordering sweep.
var Submitters = []int{1, 2, 4, 8, 16, 32, 64}

// OrderingLoad runs submitters clients, each submitting 10 counter operations
// back to back, over a constant 50 ms one-way delay (n=7, b=1).
func OrderingLoad(submitters int, seed uint64) (OrderingResult, error) {
	const delay = 50 * time.Millisecond
	sc := OrderingScenario{
		Name:    fmt.Sprintf("ordering-load-%d", submitters),
		Config:  ordering.Config{N: 7, B: 1, Object: ordering.Counter{}, MaxDelay: delay},
		Contend: Backoff{Config: backoff.Config{N: 7, B: 1, Lease: 3 * delay, MaxDelay: delay, EarlyRelease: true}},
		Net:     Network{Delay: Constant{delay}},
		Clients: submitters, OpsPerClient: 10, Ops: CounterOps, MaxTime: time.Hour,
	}
	r, err := RunOrdering(seed, sc, nil)
	if err == nil && (!r.Completed || r.ChainErr != nil || r.Lost > 0) {
		err = fmt.Errorf("%s seed %d: completed %v, chain %v, lost %d", sc.Name, seed, r.Completed, r.ChainErr, r.Lost)
	}
	return r, err
}

func orderingThroughput(seeds int) ([]report.Figure, error) {
	ops := report.Figure{Name: "ordering-throughput", Title: fmt.Sprintf("Ordering: operations per second vs concurrent submitters (n=7, b=1, one-way 50 ms, %d seeds)", seeds),
		XLabel: "concurrent submitters", YLabel: "operations per second", LogX: true}
	msgs := report.Figure{Name: "ordering-messages", Title: fmt.Sprintf("Ordering: messages per operation vs concurrent submitters (%d seeds)", seeds),
		XLabel: "concurrent submitters", YLabel: "messages per operation", LogX: true}
	batch := report.Figure{Name: "ordering-batch", Title: fmt.Sprintf("Ordering: operations per committed version (%d seeds)", seeds),
		XLabel: "concurrent submitters", YLabel: "operations per version", LogX: true}
	so, sm, sb := report.Series{Name: "counter"}, report.Series{Name: "counter"}, report.Series{Name: "counter"}
	for _, n := range Submitters {
		var perSec, perOp, perVersion float64
		for seed := range uint64(seeds) {
			r, err := OrderingLoad(n, seed)
			if err != nil {
				return nil, err
			}
			k := float64(seeds)
			perSec += float64(r.Done) / time.Duration(r.End).Seconds() / k
			perOp += float64(r.Messages) / float64(r.Done) / k
			perVersion += float64(r.Done) / float64(r.Versions) / k
		}
		so.Points = append(so.Points, report.Point{X: float64(n), Y: perSec})
		sm.Points = append(sm.Points, report.Point{X: float64(n), Y: perOp})
		sb.Points = append(sb.Points, report.Point{X: float64(n), Y: perVersion})
	}
	ops.Series, msgs.Series, batch.Series = []report.Series{so}, []report.Series{sm}, []report.Series{sb}
	return []report.Figure{ops, msgs, batch}, nil
}
