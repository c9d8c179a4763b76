package sim

import (
	"testing"
	"time"

	"github.com/dhtsync/dhtsync/mutex/backoff"
)

func TestSmoke(t *testing.T) {
	sc := Scenario{
		Name:     "smoke",
		Protocol: Backoff{backoff.Config{N: 6, B: 1, Lease: 100 * time.Millisecond, MaxDelay: 10 * time.Millisecond}},
		Net:      Network{Delay: Uniform{1 * time.Millisecond, 10 * time.Millisecond}},
		Workload: Workload{Clients: 8, Arrivals: Poisson, Rate: 5, Requests: 1000, Hold: Uniform{10 * time.Millisecond, 50 * time.Millisecond}},
	}
	m, err := Run(1, sc, nil)
	t.Logf("%+v err=%v", m, err)
	for _, tt := range []int{1, 2, 4, 8, 16, 32, 64} {
		sc.Workload = Workload{Clients: tt, Arrivals: Simultaneous}
		var sum time.Duration
		for seed := uint64(0); seed < 50; seed++ {
			m, _ := Run(seed, sc, nil)
			sum += m.ResponseMean
		}
		t.Logf("t=%d mean %v last msgs/entry %.1f rounds %.1f ev %d wall %v", tt, sum/50, m.MsgsPerEntry, m.RoundsPerEntry, m.Events, m.Wall)
	}
}
