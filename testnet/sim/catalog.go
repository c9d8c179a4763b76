package sim

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dhtsync/dhtsync/core"
	"github.com/dhtsync/dhtsync/mutex/backoff"
)

// Defaults shared by the named scenarios: a 100 ms lease over a network whose
// one-way delay is at most 10 ms, six replicas masking one Byzantine.
const (
	DefaultLease    = 100 * time.Millisecond
	DefaultMaxDelay = 10 * time.Millisecond
)

// DefaultBackoff is the backoff deployment the named scenarios start from.
func DefaultBackoff() backoff.Config {
	return backoff.Config{N: 6, B: 1, Lease: DefaultLease, MaxDelay: DefaultMaxDelay}
}

// NamedScenario is an entry of the [Catalog].
type NamedScenario struct {
	Name    string
	Summary string
	Build   func() Scenario
}

// DefaultScenario is what `peer sim` runs when given no name.
const DefaultScenario = "failure-free"

// Catalog lists the named scenarios, in the order `peer sim list` prints them.
func Catalog() []NamedScenario {
	synchronous := Network{Delay: Uniform{DefaultMaxDelay / 10, DefaultMaxDelay}}
	poisson := Workload{Clients: 8, Arrivals: Poisson, Rate: 2, Requests: 1000,
		Hold: Uniform{10 * time.Millisecond, 90 * time.Millisecond}}
	contention := Workload{Clients: 8, Arrivals: Simultaneous, PerClient: 10,
		Hold: Uniform{20 * time.Millisecond, DefaultLease}}
	withConfig := func(edit func(*backoff.Config)) Backoff {
		cfg := DefaultBackoff()
		if edit != nil {
			edit(&cfg)
		}
		return Backoff{Config: cfg}
	}
	return []NamedScenario{
		{DefaultScenario, "8 clients, 1,000 Poisson requests at 2/s, delays within δ, early release",
			func() Scenario {
				return Scenario{Protocol: withConfig(func(c *backoff.Config) { c.EarlyRelease = true }), Net: synchronous, Workload: poisson}
			}},
		{"contention", "32 clients contend at once, each holding its whole lease (the paper's amortized response time)",
			func() Scenario {
				return Scenario{Protocol: withConfig(nil), Net: synchronous, Workload: Workload{Clients: 32, Arrivals: Simultaneous}}
			}},
		{"byzantine", "b=1 of n=6 replicas answers at random while 8 clients contend",
			func() Scenario {
				return Scenario{Protocol: withConfig(nil), Net: synchronous, Workload: contention,
					Faults: Faults{Byzantine: 1, Behaviour: RandomAnswer}}
			}},
		{"colluding-liars", "b+1=2 replicas always answer FREE: more than the quorums mask, the oracle reports overlaps",
			func() Scenario {
				return Scenario{Protocol: withConfig(nil), Net: synchronous, Workload: contention,
					Faults: Faults{Byzantine: 2, Behaviour: AlwaysFree}}
			}},
		{"asynchrony", "one message in ten is late by up to 10δ; safe mode on",
			func() Scenario {
				net := synchronous
				net.Reorder, net.ReorderBy = 0.1, 10*DefaultMaxDelay
				return Scenario{Protocol: withConfig(func(c *backoff.Config) { c.SafeMode = true }), Net: net, Workload: contention}
			}},
		{"lossy", "5% loss, 5% duplication, 10% reordering, 2 replicas cut off from 1 s to 6 s",
			func() Scenario {
				net := synchronous
				net.Loss, net.Duplicate, net.Reorder, net.ReorderBy = 0.05, 0.05, 0.1, DefaultMaxDelay
				net.Partitions = []Partition{{From: core.Time(time.Second), Until: core.Time(6 * time.Second),
					Isolated: []core.Addr{core.ReplicaAddr(0), core.ReplicaAddr(1)}}}
				return Scenario{Protocol: withConfig(func(c *backoff.Config) { c.EarlyRelease = true }), Net: net, Workload: contention}
			}},
		{"resets", "replicas reset with a mean lifetime of 2.4 s (20 lock windows); grace period on",
			func() Scenario {
				return Scenario{Protocol: withConfig(func(c *backoff.Config) { c.Grace = true }), Net: synchronous, Workload: contention,
					Faults: Faults{ResetLifetime: 2400 * time.Millisecond}}
			}},
		{"client-crashes", "a holder crashes inside its critical section with probability 0.2",
			func() Scenario {
				w := contention
				w.CrashProb = 0.2
				return Scenario{Protocol: withConfig(nil), Net: synchronous, Workload: w}
			}},
		{"sigma", "Sigma, n=8 m=6, delay 50±25 ms, 1,000 Poisson requests at 5/s from a pool of clients",
			func() Scenario {
				return Scenario{Protocol: PaperSigma(), Net: PaperNetwork(25 * time.Millisecond), Workload: paperLoad(5, 1000)}
			}},
		{"sigma-resets", "Sigma with replica resets every 20 s on average (grace period on), at 5 requests/s",
			func() Scenario {
				return Scenario{Protocol: PaperSigma(), Net: PaperNetwork(25 * time.Millisecond), Workload: paperLoad(5, 1000),
					Faults: Faults{ResetLifetime: 20 * time.Second}}
			}},
		{"strawman", "the ALOHA-like strawman in Sigma's setting, at 1 request/s (it collapses above about 2/s)",
			func() Scenario {
				return Scenario{Protocol: PaperStrawman(), Net: PaperNetwork(25 * time.Millisecond), Workload: paperLoad(1, 300)}
			}},
		{"sigma-scale", "10,000 replicas (1,250 Sigma resources of 8) and 5,000 clients, 10,000 critical sections",
			func() Scenario {
				return Scenario{Protocol: PaperSigma(), Net: PaperNetwork(25 * time.Millisecond), Resources: 1250,
					Workload: Workload{Clients: 5000, Arrivals: Simultaneous, PerClient: 2, Hold: Constant{PaperCS}}}
			}},
	}
}

// paperLoad is Poisson requests at rate from a pool of idle clients.
func paperLoad(rate float64, requests int) Workload {
	return Workload{Clients: 200, Arrivals: Poisson, Rate: rate, Requests: requests, PickIdle: true, Hold: Constant{PaperCS}}
}

// Lookup returns the named scenario, or an error listing the known names.
func Lookup(name string) (Scenario, error) {
	catalog := Catalog()
	i := slices.IndexFunc(catalog, func(n NamedScenario) bool { return n.Name == name })
	if i < 0 {
		names := make([]string, len(catalog))
		for j, n := range catalog {
			names[j] = n.Name
		}
		return Scenario{}, fmt.Errorf("sim: unknown scenario %q (known: %s)", name, strings.Join(names, ", "))
	}
	sc := catalog[i].Build()
	sc.Name = name
	return sc, nil
}
