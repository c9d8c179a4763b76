package cluster

import (
	"context"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/dhtsync/dhtsync/logical"
	"github.com/dhtsync/dhtsync/ordering"
)

// benchLatency is the one-way link latency of the benchmarks: RTT 20 ms.
const benchLatency = 10 * time.Millisecond

func benchCluster(b *testing.B, peers int) (*Cluster, context.Context) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	b.Cleanup(cancel)
	c, err := New(ctx, Options{Peers: peers, Latency: benchLatency, Config: logical.DefaultConfig(4 * benchLatency)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	if err := c.WaitReady(ctx); err != nil {
		b.Fatal(err)
	}
	return c, ctx
}

func reportRTT(b *testing.B, total time.Duration, n int, name string) {
	per := total / time.Duration(n)
	b.ReportMetric(float64(per)/float64(2*benchLatency), name+"-RTT")
	b.ReportMetric(float64(per.Microseconds())/1000, name+"-ms")
}

// benchAcquires measures uncontended acquires of kind by client(i) on
// iteration i, after one acquire by peer 0 has made the replicas (lookups and
// the new incarnations' grace) and each release has reached every replica.
func benchAcquires(b *testing.B, c *Cluster, ctx context.Context, kind logical.Kind, client func(i int) *Member) {
	warm, err := c.Live()[0].Lock(ctx, kind, "bench")
	if err != nil {
		b.Fatal(err)
	}
	warm.Unlock()
	time.Sleep(5 * benchLatency)
	var total time.Duration
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		l, err := client(i).Lock(ctx, kind, "bench")
		if err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
		l.Unlock()
		b.StopTimer()
		time.Sleep(5 * benchLatency)
		b.StartTimer()
	}
	reportRTT(b, total, b.N, "acquire")
}

// BenchmarkAcquireCached measures an uncontended acquire and release by a peer
// that knows the replica hosts already: the papers' one round trip.
func BenchmarkAcquireCached(b *testing.B) {
	for _, kind := range []logical.Kind{logical.Backoff, logical.Sigma} {
		b.Run(string(kind), func(b *testing.B) {
			c, ctx := benchCluster(b, 16)
			benchAcquires(b, c, ctx, kind, func(int) *Member { return c.Live()[0] })
		})
	}
}

// BenchmarkAcquireCold measures the first acquire by a peer that has never
// looked up the resource's replica hosts: DHT lookups and new streams
// included. Each iteration uses another peer.
func BenchmarkAcquireCold(b *testing.B) {
	for _, kind := range []logical.Kind{logical.Backoff, logical.Sigma} {
		b.Run(string(kind), func(b *testing.B) {
			c, ctx := benchCluster(b, max(16, b.N+1)) // a fresh peer per iteration
			benchAcquires(b, c, ctx, kind, func(i int) *Member { return c.Live()[1+i] })
		})
	}
}

// BenchmarkSigmaHandoff measures, between a holder's Unlock and the next
// holder's entry, the time for a waiting client on another peer.
func BenchmarkSigmaHandoff(b *testing.B) {
	c, ctx := benchCluster(b, 16)
	holder, waiter := c.Live()[0], c.Live()[1]
	l, err := holder.Lock(ctx, logical.Sigma, "bench")
	if err != nil {
		b.Fatal(err)
	}
	var total time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		got := make(chan *logical.Lease, 1)
		go func() {
			next, err := waiter.Lock(ctx, logical.Sigma, "bench")
			if err != nil {
				b.Error(err)
			}
			got <- next
		}()
		time.Sleep(10 * benchLatency) // the waiter is queued at the replicas
		b.StartTimer()
		start := time.Now()
		l.Unlock()
		next := <-got
		total += time.Since(start)
		if next == nil {
			b.FailNow()
		}
		l, holder, waiter = next, waiter, holder
	}
	b.StopTimer()
	l.Unlock()
	reportRTT(b, total, b.N, "handoff")
}

// BenchmarkOrderingSubmit measures one client's operations on a counter
// object, one at a time.
func BenchmarkOrderingSubmit(b *testing.B) {
	c, ctx := benchCluster(b, 16)
	o, err := c.Live()[0].Object("bench")
	if err != nil {
		b.Fatal(err)
	}
	defer o.Close()
	if _, err := o.Submit(ctx, ordering.CounterAdd(1)); err != nil { // recovery, grace, lookups
		b.Fatal(err)
	}
	var total time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		if _, err := o.Submit(ctx, ordering.CounterAdd(1)); err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
	}
	reportRTT(b, total, b.N, "submit")
}

// BenchmarkPeersInOneProcess runs 64 peers with 8 Sigma lock clients on 4
// locks and 2 counter clients for 10 s per iteration, and reports the CPU time
// and the live heap per peer.
func BenchmarkPeersInOneProcess(b *testing.B) {
	const peers, window = 64, 10 * time.Second
	c, ctx := benchCluster(b, peers)
	var cpu time.Duration
	var sections, ops int
	b.ResetTimer()
	for range b.N {
		x, h := NewExclusion(), &History{}
		objects := []*logical.Object{}
		for _, m := range c.Live()[8:10] {
			o, err := m.Object("bench-counter")
			if err != nil {
				b.Fatal(err)
			}
			objects = append(objects, o)
		}
		stop := make(chan struct{})
		fail := func(err error) { b.Error(err) }
		before := processCPU()
		locks := x.Contend(ctx, c.Live()[:8], logical.Sigma, []string{"l0", "l1", "l2", "l3"}, 10*time.Millisecond, stop, fail)
		counter := h.SubmitEach(ctx, objects, 0, stop, fail)
		time.Sleep(window)
		close(stop)
		locks.Wait()
		counter.Wait()
		cpu += processCPU() - before
		sections += x.Entries()
		ops += h.Len()
		for _, o := range objects {
			o.Close()
		}
		if len(x.Overlaps()) > 0 || !h.Linearizable() {
			b.Fatal("unsafe run")
		}
	}
	b.StopTimer()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	elapsed := time.Duration(b.N) * window
	b.ReportMetric(100*float64(cpu)/float64(elapsed)/peers, "%CPU/peer")
	b.ReportMetric(float64(ms.HeapInuse)/peers/(1<<20), "heap-MiB/peer")
	b.ReportMetric(float64(runtime.NumGoroutine())/peers, "goroutines/peer")
	b.ReportMetric(float64(sections)/elapsed.Seconds(), "sections/s")
	b.ReportMetric(float64(ops)/elapsed.Seconds(), "ops/s")
}

// processCPU is the user and system CPU time of this process so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
