package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/dhtsync/dhtsync/logical"
	"github.com/dhtsync/dhtsync/testnet/cluster"
)

// testnetFlags shape `peer testnet`.
type testnetFlags struct {
	peers     int
	latency   time.Duration
	delta     time.Duration
	duration  time.Duration
	resources int
	clients   int
	objects   int
	hold      time.Duration
	tcp       bool
}

func newTestnetCommand() *cobra.Command {
	var f testnetFlags
	cmd := &cobra.Command{
		Use:   "testnet",
		Short: "Start in-process libp2p peers, run contending lock and object clients, and print the oracle's verdict",
		Long: "Start --peers dhtsync peers in this process on libp2p's mock network (or loopback TCP),\n" +
			"run lock clients of both mutex protocols on a few resources and clients of a replicated\n" +
			"counter for --duration, then check every critical section with the oracle and the\n" +
			"counter's history with porcupine, and print the figures.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTestnet(cmd.Context(), cmd.OutOrStdout(), f)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&f.peers, "peers", 16, "peers to start")
	fl.DurationVar(&f.latency, "latency", 10*time.Millisecond, "one-way latency of every mock link")
	fl.DurationVar(&f.delta, "delta", 0, "δ, the deployment's bound on one-way delay (0: 4 × latency, at least 20ms)")
	fl.DurationVar(&f.duration, "duration", 5*time.Second, "how long the clients run")
	fl.IntVar(&f.resources, "resources", 2, "locks per mutex protocol")
	fl.IntVar(&f.clients, "clients", 4, "lock clients per mutex protocol, each on its own peer")
	fl.IntVar(&f.objects, "objects", 3, "clients of the replicated counter, each on its own peer")
	fl.DurationVar(&f.hold, "hold", 10*time.Millisecond, "how long a lock client holds the lock")
	fl.BoolVar(&f.tcp, "tcp", false, "run the peers on loopback TCP instead of the mock network (no latency)")
	return cmd
}

func runTestnet(ctx context.Context, out io.Writer, f testnetFlags) error {
	if f.peers < 1 || f.resources < 1 || f.clients < 0 || f.objects < 0 {
		return errors.New("testnet: --peers and --resources must be positive, --clients and --objects not negative")
	}
	if need := 2*f.clients + f.objects; need > f.peers {
		return fmt.Errorf("testnet: %d clients need %d peers, have %d (each client runs on its own peer)", need, need, f.peers)
	}
	delta := f.delta
	if delta == 0 {
		delta = max(4*f.latency, 20*time.Millisecond)
	}
	cfg := logical.DefaultConfig(delta)
	cfg.Log = slog.New(slog.DiscardHandler)
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, f.duration+2*time.Minute)
	defer cancel()

	network := fmt.Sprintf("the mock network, %v one-way latency", f.latency)
	if f.tcp {
		network = "loopback TCP"
	}
	fmt.Fprintf(out, "starting %d peers on %s (δ = %v, leases %v)\n", f.peers, network, delta, cfg.Backoff.Lease)
	start := time.Now()
	c, err := cluster.New(ctx, cluster.Options{Peers: f.peers, Latency: f.latency, TCP: f.tcp, Config: cfg})
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.WaitReady(ctx); err != nil {
		return err
	}
	fmt.Fprintf(out, "routing tables settled in %v\n", time.Since(start).Round(time.Millisecond))

	var errMu sync.Mutex
	var errs []error
	report := func(err error) { errMu.Lock(); errs = append(errs, err); errMu.Unlock() }
	live := c.Live()
	kinds := []logical.Kind{logical.Backoff, logical.Sigma}
	exclusion := map[logical.Kind]*cluster.Exclusion{}
	var resources []string
	for i := range f.resources {
		resources = append(resources, fmt.Sprintf("lock-%d", i))
	}
	stop := make(chan struct{})
	var running []*sync.WaitGroup
	for k, kind := range kinds {
		exclusion[kind] = cluster.NewExclusion()
		members := live[k*f.clients : (k+1)*f.clients]
		running = append(running, exclusion[kind].Contend(ctx, members, kind, resources, f.hold, stop, report))
	}
	var objects []*logical.Object
	for _, m := range live[2*f.clients : 2*f.clients+f.objects] {
		o, err := m.Object("counter")
		if err != nil {
			return err
		}
		defer o.Close()
		objects = append(objects, o)
	}
	var history cluster.History
	running = append(running, history.SubmitEach(ctx, objects, 0, stop, report))
	fmt.Fprintf(out, "running %d lock clients per protocol on %d locks and %d counter clients for %v\n",
		f.clients, f.resources, f.objects, f.duration)
	time.Sleep(f.duration)
	close(stop)
	for _, wg := range running {
		wg.Wait()
	}
	return printTestnet(ctx, out, c, kinds, exclusion, &history, objects, errs)
}

func printTestnet(ctx context.Context, out io.Writer, c *cluster.Cluster, kinds []logical.Kind,
	exclusion map[logical.Kind]*cluster.Exclusion, history *cluster.History, objects []*logical.Object, errs []error) error {
	safe := len(errs) == 0
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "\tcritical sections\toverlaps\tacquire p50\tacquire p99\t")
	for _, kind := range kinds {
		x := exclusion[kind]
		overlaps := x.Overlaps()
		safe = safe && len(overlaps) == 0
		times := x.AcquireTimes()
		fmt.Fprintf(w, "%s\t%d\t%d\t%s\t%s\t\n", kind, x.Entries(), len(overlaps), quantile(times, 0.5), quantile(times, 0.99))
	}
	w.Flush()
	if len(objects) > 0 {
		value, err := cluster.ReadCounter(ctx, objects[0])
		if err != nil {
			errs = append(errs, fmt.Errorf("reading the counter: %w", err))
		}
		linearizable := history.Linearizable()
		lat := history.Latencies()
		fmt.Fprintf(out, "counter: %d operations, latency p50 %s p99 %s, final value %d, linearizable: %v\n",
			history.Len(), quantile(lat, 0.5), quantile(lat, 0.99), value, linearizable)
		safe = safe && err == nil && linearizable && value == int64(history.Len())
	}
	var total logical.Stats
	replicas := 0
	for _, m := range c.Live() {
		s := m.Stats()
		total.Lookups += s.Lookups
		total.Redirects += s.Redirects
		total.Dropped += s.Dropped
		total.NewIncarnations += s.NewIncarnations
		replicas += len(m.Replicas())
	}
	fmt.Fprintf(out, "peers: %d replicas hosted, %d new incarnations, %d DHT lookups, %d redirects, %d messages dropped; peak memory %s\n",
		replicas, total.NewIncarnations, total.Lookups, total.Redirects, total.Dropped, peakMemory())
	for _, err := range errs {
		fmt.Fprintln(out, "error:", err)
	}
	if !safe {
		fmt.Fprintln(out, "verdict: UNSAFE")
		return errors.New("testnet: the oracle or the checks failed")
	}
	fmt.Fprintln(out, "verdict: SAFE (no overlapping critical sections; the counter's history is linearizable and its value matches)")
	return nil
}

// quantile of sorted durations, rounded for display.
func quantile(sorted []time.Duration, q float64) string {
	if len(sorted) == 0 {
		return "-"
	}
	return sorted[min(len(sorted)-1, int(q*float64(len(sorted))))].Round(100 * time.Microsecond).String()
}
