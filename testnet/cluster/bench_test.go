package cluster

import (
	"context"
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

// BenchmarkAcquireCached measures an uncontended acquire and release by a peer
// that knows the replica hosts already: the papers' one round trip.
func BenchmarkAcquireCached(b *testing.B) {
	for _, kind := range []logical.Kind{logical.Backoff, logical.Sigma} {
		b.Run(string(kind), func(b *testing.B) {
			c, ctx := benchCluster(b, 16)
			p := c.Live()[0]
			warm, err := p.Lock(ctx, kind, "bench") // lookups and the new incarnations' grace
			if err != nil {
				b.Fatal(err)
			}
			warm.Unlock()
			time.Sleep(5 * benchLatency) // let the release reach every replica
			var total time.Duration
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				l, err := p.Lock(ctx, kind, "bench")
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
		})
	}
}

// BenchmarkAcquireCold measures the first acquire by a peer that has never
// looked up the resource's replica hosts: DHT lookups included. Each iteration
// uses another peer of a 64-peer cluster, so run it with at most 63
// iterations (-benchtime 30x).
func BenchmarkAcquireCold(b *testing.B) {
	for _, kind := range []logical.Kind{logical.Backoff, logical.Sigma} {
		b.Run(string(kind), func(b *testing.B) {
			if b.N > 63 {
				b.Skipf("%d iterations: one fresh peer each, 63 at most", b.N)
			}
			c, ctx := benchCluster(b, 64)
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
				l, err := c.Live()[1+i].Lock(ctx, kind, "bench")
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
