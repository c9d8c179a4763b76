package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/dhtsync/dhtsync/mutex/backoff"
	"github.com/dhtsync/dhtsync/testnet/sim"
	"github.com/dhtsync/dhtsync/testnet/sim/classic"
)

// simFlags are the knobs `peer sim` lets a user turn on a named scenario.
type simFlags struct {
	seed      uint64
	seeds     int
	trace     string
	clients   int
	requests  int
	n, b, m   int
	byzantine int
	behaviour string
	policy    string
	safeMode  bool
	grace     bool
	early     bool
	delayed   bool
	lifetime  time.Duration
	loss      float64
}

func newSimCommand() *cobra.Command {
	var f simFlags
	cmd := &cobra.Command{
		Use:   "sim [scenario]",
		Short: "Run a named scenario in the deterministic simulator and print the oracle's verdict and the metrics",
		Long: "Run a named scenario (default " + sim.DefaultScenario + ") in the seeded discrete-event simulator.\n" +
			"The same seed replays the same run byte for byte; --trace writes its event trace.\n" +
			"`peer sim list` names the scenarios.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := sim.DefaultScenario
			if len(args) == 1 {
				name = args[0]
			}
			sc, err := sim.Lookup(name)
			if err != nil {
				return err
			}
			if err := f.apply(cmd, &sc); err != nil {
				return err
			}
			return runScenario(cmd.OutOrStdout(), sc, f)
		},
	}
	fl := cmd.Flags()
	fl.Uint64Var(&f.seed, "seed", 1, "seed of the (first) run")
	fl.IntVar(&f.seeds, "seeds", 1, "number of consecutive seeds to run")
	fl.StringVar(&f.trace, "trace", "", "write the event trace of the run to this file (one seed only)")
	fl.IntVar(&f.clients, "clients", 0, "number of clients")
	fl.IntVar(&f.requests, "requests", 0, "requests (Poisson scenarios) or requests per client (contention scenarios)")
	fl.IntVar(&f.n, "n", 0, "number of replicas")
	fl.IntVar(&f.b, "b", 0, "backoff mutex: Byzantine replicas tolerated (needs n ≥ 5b+1)")
	fl.IntVar(&f.m, "m", 0, "Sigma and strawman: votes needed (n/2 < m ≤ n)")
	fl.IntVar(&f.byzantine, "byzantine", 0, "number of replicas that actually misbehave")
	fl.StringVar(&f.behaviour, "behaviour", "", "how they misbehave: free, locked, random, slow")
	fl.StringVar(&f.policy, "policy", "", "backoff policy: exponential, polynomial-2, polynomial-3")
	fl.BoolVar(&f.safeMode, "safe-mode", false, "ignore replies older than 2δ")
	fl.BoolVar(&f.grace, "grace", false, "new replica incarnations grant nothing for one maximum lease")
	fl.BoolVar(&f.early, "early-release", false, "give grants back when leaving the critical section")
	fl.BoolVar(&f.delayed, "delayed-replies", false, "servers answer tries that find them locked when they become free")
	fl.DurationVar(&f.lifetime, "reset-lifetime", 0, "mean lifetime of a replica incarnation (0: no resets)")
	fl.Float64Var(&f.loss, "loss", 0, "probability that a message is lost")
	cmd.AddCommand(newSimListCommand(), newSimSweepCommand())
	return cmd
}

// apply changes sc by the flags the user set.
func (f simFlags) apply(cmd *cobra.Command, sc *sim.Scenario) error {
	set := cmd.Flags().Changed
	if f.seeds < 1 {
		return fmt.Errorf("--seeds must be at least 1, got %d", f.seeds)
	}
	if set("trace") && f.seeds != 1 {
		return errors.New("--trace needs a single seed (--seeds 1)")
	}
	if set("clients") {
		sc.Workload.Clients = f.clients
	}
	if set("requests") {
		if f.requests < 1 {
			return fmt.Errorf("--requests must be at least 1, got %d", f.requests)
		}
		if sc.Workload.Arrivals == sim.Poisson {
			sc.Workload.Requests = f.requests
		} else {
			sc.Workload.PerClient = f.requests
		}
	}
	if set("byzantine") {
		sc.Faults.Byzantine = f.byzantine
	}
	if set("behaviour") {
		how, err := sim.ParseBehaviour(f.behaviour)
		if err != nil {
			return err
		}
		sc.Faults.Behaviour = how
	}
	if set("reset-lifetime") {
		sc.Faults.ResetLifetime = f.lifetime
	}
	if set("loss") {
		sc.Net.Loss = f.loss
	}
	switch p := sc.Protocol.(type) {
	case sim.Backoff:
		if err := f.applyBackoff(cmd, &p.Config); err != nil {
			return err
		}
		sc.Protocol = p
	case sim.Sigma:
		f.applyVotes(cmd, &p.Config.N, &p.Config.M, &p.Config.Grace)
		sc.Protocol = p
		return p.Config.Validate()
	case sim.Strawman:
		f.applyVotes(cmd, &p.Config.N, &p.Config.M, &p.Config.Grace)
		sc.Protocol = p
		return p.Config.Validate()
	}
	return nil
}

// applyVotes sets the fields that Sigma and the strawman share.
func (f simFlags) applyVotes(cmd *cobra.Command, n, m *int, grace *bool) {
	setInt(cmd, "n", n, f.n)
	setInt(cmd, "m", m, f.m)
	if cmd.Flags().Changed("grace") {
		*grace = f.grace
	}
}

func setInt(cmd *cobra.Command, flag string, field *int, v int) {
	if cmd.Flags().Changed(flag) {
		*field = v
	}
}

func (f simFlags) applyBackoff(cmd *cobra.Command, cfg *backoff.Config) error {
	set := cmd.Flags().Changed
	setInt(cmd, "n", &cfg.N, f.n)
	setInt(cmd, "b", &cfg.B, f.b)
	if set("policy") {
		policy, err := parsePolicy(f.policy)
		if err != nil {
			return err
		}
		cfg.Policy = policy
	}
	for flag, field := range map[string]*bool{"safe-mode": &cfg.SafeMode, "grace": &cfg.Grace,
		"early-release": &cfg.EarlyRelease, "delayed-replies": &cfg.DelayedReplies} {
		if set(flag) {
			*field, _ = cmd.Flags().GetBool(flag)
		}
	}
	return cfg.Validate()
}

func parsePolicy(s string) (backoff.Policy, error) {
	switch s {
	case "exponential":
		return backoff.Exponential{}, nil
	case "polynomial-2":
		return backoff.Polynomial{Degree: 2}, nil
	case "polynomial-3":
		return backoff.Polynomial{Degree: 3}, nil
	}
	return nil, fmt.Errorf("unknown backoff policy %q (known: exponential, polynomial-2, polynomial-3)", s)
}

func runScenario(w io.Writer, sc sim.Scenario, f simFlags) error {
	var trace io.Writer
	if f.trace != "" {
		file, err := os.Create(f.trace)
		if err != nil {
			return err
		}
		defer file.Close()
		trace = file
	}
	var runs []sim.Metrics
	for seed := f.seed; seed < f.seed+uint64(f.seeds); seed++ {
		m, err := sim.Run(seed, sc, trace)
		if err != nil {
			return err
		}
		runs = append(runs, m)
	}
	if len(runs) == 1 {
		printRun(w, sc, runs[0])
	} else {
		printRuns(w, sc, runs)
	}
	if f.trace != "" {
		fmt.Fprintf(w, "trace      written to %s\n", f.trace)
	}
	return nil
}

func describe(sc sim.Scenario) string {
	resources := ""
	if sc.Resources > 1 {
		resources = fmt.Sprintf("  × %d resources", sc.Resources)
	}
	switch p := sc.Protocol.(type) {
	case sim.Backoff:
		c := p.Config
		policy := "exponential"
		if c.Policy != nil {
			policy = c.Policy.Name()
		}
		opts := []string{policy}
		for name, on := range map[string]bool{"safe-mode": c.SafeMode, "grace": c.Grace, "early-release": c.EarlyRelease,
			"delayed-replies": c.DelayedReplies, "anchor-at-return": c.AnchorAtReturn} {
			if on {
				opts = append(opts, name)
			}
		}
		slices.Sort(opts[1:])
		return fmt.Sprintf("backoff mutex  n=%d b=%d  Δ=%v δ=%v  %s%s", c.N, c.B, c.Lease, c.MaxDelay, strings.Join(opts, " "), resources)
	case sim.Sigma:
		c := p.Config
		return fmt.Sprintf("sigma  n=%d m=%d  lease=%v δ=%v  grace=%v%s", c.N, c.M, c.Lease, c.MaxDelay, c.Grace, resources)
	case sim.Strawman:
		c := p.Config
		return fmt.Sprintf("strawman  n=%d m=%d  lease=%v δ=%v  grace=%v%s", c.N, c.M, c.Lease, c.MaxDelay, c.Grace, resources)
	}
	return sc.Protocol.Name() + resources
}

func verdict(m sim.Metrics) string {
	switch {
	case m.Error != "":
		return "ERROR: " + m.Error
	case m.Overlaps > 0:
		return fmt.Sprintf("VIOLATION: %d critical sections overlapped another client's; first: %s", m.Overlaps, m.FirstOverlap)
	case !m.Completed:
		return fmt.Sprintf("INCOMPLETE: %d of %d requests served by virtual time %v (no overlap)", m.Entries, m.Requests, m.End)
	}
	return fmt.Sprintf("SAFE: no two of %d critical sections overlapped; every request was served", m.Entries)
}

func printRun(w io.Writer, sc sim.Scenario, m sim.Metrics) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "scenario\t%s\n", sc.Name)
	fmt.Fprintf(tw, "protocol\t%s\n", describe(sc))
	fmt.Fprintf(tw, "workload\t%d clients, %d requests, %d crashed; %d Byzantine (%s)\n",
		sc.Workload.Clients, m.Requests, m.Crashes, sc.Faults.Byzantine, orNone(string(sc.Faults.Behaviour)))
	fmt.Fprintf(tw, "seed\t%d\n", m.Seed)
	fmt.Fprintf(tw, "verdict\t%s\n", verdict(m))
	fmt.Fprintf(tw, "response\tmean %v  p50 %v  p99 %v  max %v\n", round(m.ResponseMean), round(m.ResponseP50), round(m.ResponseP99), round(m.ResponseMax))
	fmt.Fprintf(tw, "throughput\t%.2f critical sections per virtual second over %v\n", m.Throughput, round(time.Duration(m.End)))
	fmt.Fprintf(tw, "cost\t%.1f messages and %.2f rounds per critical section\n", m.MsgsPerEntry, m.RoundsPerEntry)
	fmt.Fprintf(tw, "simulator\t%d events, %d messages in %v wall (%.1fM messages/s), peak memory %s\n",
		m.Events, m.Messages, round(m.Wall), float64(m.Messages)/m.Wall.Seconds()/1e6, peakMemory())
	fmt.Fprintf(tw, "replay\tpeer sim %s --seed %d --trace trace.txt\n", sc.Name, m.Seed)
	tw.Flush()
}

func printRuns(w io.Writer, sc sim.Scenario, runs []sim.Metrics) {
	fmt.Fprintf(w, "scenario %s: %s\n", sc.Name, describe(sc))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "seed\tentries\toverlaps\tcompleted\tmean response\tp99 response\tmsgs/entry\trounds/entry\t")
	overlaps, incomplete := 0, 0
	for _, m := range runs {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%v\t%v\t%v\t%.1f\t%.2f\t\n", m.Seed, m.Entries, m.Overlaps, m.Completed,
			round(m.ResponseMean), round(m.ResponseP99), m.MsgsPerEntry, m.RoundsPerEntry)
		overlaps += m.Overlaps
		if !m.Completed {
			incomplete++
		}
	}
	tw.Flush()
	fmt.Fprintf(w, "verdict: %d overlapping critical sections and %d incomplete runs over %d seeds\n", overlaps, incomplete, len(runs))
}

func newSimListCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the named scenarios and sweeps",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "SCENARIO\tWHAT IT RUNS")
			for _, n := range sim.Catalog() {
				fmt.Fprintf(tw, "%s\t%s\n", n.Name, n.Summary)
			}
			fmt.Fprintln(tw, "\nSWEEP\tWHAT IT MEASURES (peer sim sweep NAME)")
			for _, e := range experiments() {
				fmt.Fprintf(tw, "%s\t%s\n", e.Name, e.Summary)
			}
			return tw.Flush()
		},
	}
}

func newSimSweepCommand() *cobra.Command {
	var out string
	var seeds int
	cmd := &cobra.Command{
		Use:   "sweep NAME",
		Short: "Run a sweep, print its tables and write a CSV and a PNG per figure",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := lookupExperiment(args[0])
			if err != nil {
				return err
			}
			if !cmd.Flags().Changed("seeds") {
				seeds = e.DefaultSeeds
			}
			if seeds < 1 {
				return fmt.Errorf("--seeds must be at least 1, got %d", seeds)
			}
			start := time.Now()
			figs, err := e.Run(seeds)
			if err != nil {
				return err
			}
			if err := os.MkdirAll(out, 0o755); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			for _, fig := range figs {
				fmt.Fprintf(w, "%s\n\n", fig.Title)
				if err := fig.WriteTable(w); err != nil {
					return err
				}
				if err := fig.Save(out); err != nil {
					return err
				}
				path := filepath.Join(out, fig.Name)
				fmt.Fprintf(w, "\nwrote %s.csv and %s.png\n\n", path, path)
			}
			fmt.Fprintf(w, "%d seeds per point, %v\n", seeds, round(time.Since(start)))
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "docs/bench", "directory for the CSV and PNG files")
	cmd.Flags().IntVar(&seeds, "seeds", 0, "seeds per point (default: the sweep's own)")
	return cmd
}

// experiments are the simulator's sweeps and the classic comparison.
func experiments() []sim.Experiment {
	return append(sim.Experiments(), classic.Experiments()...)
}

func lookupExperiment(name string) (sim.Experiment, error) {
	var names []string
	for _, e := range experiments() {
		if e.Name == name {
			return e, nil
		}
		names = append(names, e.Name)
	}
	return sim.Experiment{}, fmt.Errorf("unknown sweep %q (known: %s)", name, strings.Join(names, ", "))
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func round(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}
