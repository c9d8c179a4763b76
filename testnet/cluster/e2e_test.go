package cluster

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/dhtsync/dhtsync/logical"
)

// testDelay is δ of the test deployment; mock links add testLatency one way.
const (
	testDelay   = 20 * time.Millisecond
	testLatency = 2 * time.Millisecond
)

func startCluster(t *testing.T, opts Options) (*Cluster, context.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	if opts.Latency == 0 && !opts.TCP {
		opts.Latency = testLatency
	}
	if opts.Config.Backoff.N == 0 {
		opts.Config = logical.DefaultConfig(testDelay)
	}
	c, err := New(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return c, ctx
}

// contend runs lock clients that fail the test on error.
func contend(ctx context.Context, t *testing.T, x *Exclusion, members []*Member, kind logical.Kind, resources []string, stop <-chan struct{}) *sync.WaitGroup {
	return x.Contend(ctx, members, kind, resources, 5*time.Millisecond, stop, func(err error) { t.Error(err) })
}

func TestContendingClientsAreExclusive(t *testing.T) {
	for _, kind := range []logical.Kind{logical.Backoff, logical.Sigma} {
		t.Run(string(kind), func(t *testing.T) {
			c, ctx := startCluster(t, Options{Peers: 16})
			x := NewExclusion()
			stop := make(chan struct{})
			wg := contend(ctx, t, x, c.Live()[:6], kind, []string{"alpha", "beta"}, stop)
			time.Sleep(4 * time.Second)
			close(stop)
			wg.Wait()
			if o := x.Overlaps(); len(o) > 0 {
				t.Fatalf("%d overlapping sections, first: %v", len(o), o[0])
			}
			if x.Entries() < 12 {
				t.Fatalf("only %d critical sections in 4 s", x.Entries())
			}
			t.Logf("%d critical sections, no overlap", x.Entries())
		})
	}
}

// submitAll has each object client submit perClient additions of 1.
func submitAll(ctx context.Context, t *testing.T, h *History, objects []*logical.Object, perClient int) {
	h.SubmitEach(ctx, objects, perClient, nil, func(err error) { t.Error(err) }).Wait()
}

func checkHistory(t *testing.T, h *History) {
	t.Helper()
	if !h.Linearizable() {
		t.Fatalf("the history of %d operations is not linearizable", h.Len())
	}
}

func openObjects(t *testing.T, members []*Member, resource string) []*logical.Object {
	var out []*logical.Object
	for _, m := range members {
		o, err := m.Object(resource)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(o.Close)
		out = append(out, o)
	}
	return out
}

func readCounter(ctx context.Context, t *testing.T, o *logical.Object) int64 {
	t.Helper()
	v, err := ReadCounter(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestObjectOperationsAreLinearizable(t *testing.T) {
	c, ctx := startCluster(t, Options{Peers: 16})
	objects := openObjects(t, c.Live()[:4], "counter")
	var h History
	submitAll(ctx, t, &h, objects, 10)
	checkHistory(t, &h)
	if v := readCounter(ctx, t, objects[0]); v != 40 {
		t.Fatalf("counter at %d after 40 additions", v)
	}
}

// replicaOn returns member m's replica of (service, resource, index), if any.
func replicaOn(m *Member, service, resource string, index int) (logical.ReplicaInfo, bool) {
	if m.Peer == nil {
		return logical.ReplicaInfo{}, false
	}
	for _, r := range m.Replicas() {
		if r.Service == service && r.Resource == resource && r.Index == index {
			return r, true
		}
	}
	return logical.ReplicaInfo{}, false
}

func mustKey(t *testing.T, resource string, i int) logical.Key {
	k, err := logical.ReplicaKey(resource, i)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// notAmong picks live members other than the given ones.
func notAmong(c *Cluster, n int, exclude ...*Member) []*Member {
	var out []*Member
	for _, m := range c.Live() {
		skip := false
		for _, e := range exclude {
			skip = skip || e == m
		}
		if !skip && len(out) < n {
			out = append(out, m)
		}
	}
	return out
}

func TestKillingAHostMovesTheKey(t *testing.T) {
	for _, kind := range []logical.Kind{logical.Backoff, logical.Sigma} {
		t.Run(string(kind), func(t *testing.T) {
			c, ctx := startCluster(t, Options{Peers: 16})
			key := mustKey(t, "alpha", 0)
			victim := c.HostOf(key)
			clients := notAmong(c, 5, victim)
			x := NewExclusion()
			stop := make(chan struct{})
			wg := contend(ctx, t, x, clients, kind, []string{"alpha"}, stop)
			time.Sleep(1500 * time.Millisecond)
			before, ok := replicaOn(victim, string(kind), "alpha", 0)
			if !ok {
				t.Fatalf("the closest peer does not host replica 0: %v", victim.Replicas())
			}
			entries := x.Entries()
			c.Kill(victim.Index)
			heir := c.HostOf(key)
			time.Sleep(3 * time.Second)
			close(stop)
			wg.Wait()
			after, ok := replicaOn(heir, string(kind), "alpha", 0)
			if !ok {
				t.Fatalf("the next-closest peer does not host replica 0 after the kill: %v", heir.Replicas())
			}
			if after.Origin != logical.OriginNew || after.Incarnation == before.Incarnation {
				t.Fatalf("replica 0 after the kill: %+v; want a new incarnation (before: %+v)", after, before)
			}
			if o := x.Overlaps(); len(o) > 0 {
				t.Fatalf("%d overlapping sections, first: %v", len(o), o[0])
			}
			if x.Entries() <= entries {
				t.Fatal("no critical section after the kill")
			}
			t.Logf("%d sections before the kill, %d after; replica 0 moved to peer %d in incarnation %d",
				entries, x.Entries()-entries, heir.Index, after.Incarnation)
		})
	}
}

func TestKillingAnObjectHostLosesNoOperation(t *testing.T) {
	c, ctx := startCluster(t, Options{Peers: 16})
	key := mustKey(t, "counter", 0)
	victim := c.HostOf(key)
	objects := openObjects(t, notAmong(c, 3, victim), "counter")
	var h History
	submitAll(ctx, t, &h, objects, 5)
	c.Kill(victim.Index)
	submitAll(ctx, t, &h, objects, 5)
	checkHistory(t, &h)
	if v := readCounter(ctx, t, objects[0]); v != 30 {
		t.Fatalf("counter at %d after 30 additions", v)
	}
	heir := c.HostOf(key)
	if r, ok := replicaOn(heir, "ordering", "counter", 0); !ok || r.Origin != logical.OriginNew {
		t.Fatalf("replica 0 after the kill: %+v (hosted: %v)", r, ok)
	}
}

func TestJoiningCloserPeerReceivesTheHandOff(t *testing.T) {
	c, ctx := startCluster(t, Options{Peers: 16})
	key := mustKey(t, "alpha", 0)
	old := c.HostOf(key)
	client := notAmong(c, 1, old)[0]
	x := NewExclusion()
	if err := x.Section(ctx, client, logical.Sigma, "alpha", time.Millisecond); err != nil {
		t.Fatal(err)
	}
	before, ok := replicaOn(old, "sigma", "alpha", 0)
	if !ok {
		t.Fatal("replica 0 is not on the closest peer")
	}
	k, err := c.KeyCloserThan(key)
	if err != nil {
		t.Fatal(err)
	}
	joined, err := c.Add(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	var after logical.ReplicaInfo
	for ok = false; !ok && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		after, ok = replicaOn(joined, "sigma", "alpha", 0)
	}
	if !ok {
		t.Fatal("the joining peer never received replica 0")
	}
	if after.Origin != logical.OriginHandOff || after.Incarnation != before.Incarnation {
		t.Fatalf("replica 0 on the new peer: %+v; want a hand-off of incarnation %d", after, before.Incarnation)
	}
	if _, still := replicaOn(old, "sigma", "alpha", 0); still {
		t.Fatal("the old host still serves replica 0")
	}
	// The client's cache still names the old host: its next request there is
	// redirected to the new one.
	if err := x.Section(ctx, client, logical.Sigma, "alpha", time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if client.Stats().Redirected == 0 {
		t.Fatal("the client was not redirected")
	}
	if joined.Stats().NewIncarnations != 0 {
		t.Fatalf("the new peer started %d new incarnations: a reset instead of a hand-off", joined.Stats().NewIncarnations)
	}
}

func TestRestartedPeerResumesItsReplicas(t *testing.T) {
	c, ctx := startCluster(t, Options{Peers: 16, DataDir: t.TempDir()})
	key := mustKey(t, "alpha", 0)
	host := c.HostOf(key)
	client := notAmong(c, 1, host)[0]
	x := NewExclusion()
	if err := x.Section(ctx, client, logical.Sigma, "alpha", time.Millisecond); err != nil {
		t.Fatal(err)
	}
	objects := openObjects(t, []*Member{client}, "counter")
	var h History
	submitAll(ctx, t, &h, objects, 3)
	before := host.Replicas()
	if len(before) == 0 {
		t.Fatal("the host holds no replica")
	}
	c.Kill(host.Index)
	if err := c.Restart(ctx, host.Index); err != nil {
		t.Fatal(err)
	}
	after := host.Replicas()
	if len(after) != len(before) {
		t.Fatalf("%d replicas before the restart, %d after", len(before), len(after))
	}
	for i, r := range after {
		if r.Origin != logical.OriginRestored || r.Incarnation != before[i].Incarnation || r.Resource != before[i].Resource {
			t.Fatalf("replica %d after the restart: %+v, before: %+v", i, r, before[i])
		}
	}
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	if err := x.Section(ctx, client, logical.Sigma, "alpha", time.Millisecond); err != nil {
		t.Fatal(err)
	}
	submitAll(ctx, t, &h, objects, 2)
	checkHistory(t, &h)
	if v := readCounter(ctx, t, objects[0]); v != 5 {
		t.Fatalf("counter at %d after 5 additions", v)
	}
	if n := host.Stats().NewIncarnations; n != 0 {
		t.Fatalf("the restarted peer started %d new incarnations", n)
	}
}

func TestLoopbackTCP(t *testing.T) {
	c, ctx := startCluster(t, Options{Peers: 16, TCP: true})
	x := NewExclusion()
	stop := make(chan struct{})
	wg := contend(ctx, t, x, c.Live()[:4], logical.Sigma, []string{"alpha"}, stop)
	objects := openObjects(t, c.Live()[4:6], "counter")
	var h History
	submitAll(ctx, t, &h, objects, 5)
	close(stop)
	wg.Wait()
	checkHistory(t, &h)
	if o := x.Overlaps(); len(o) > 0 || x.Entries() == 0 {
		t.Fatalf("%d sections, %d overlaps", x.Entries(), len(o))
	}
	t.Logf("%d critical sections and %d operations over loopback TCP", x.Entries(), h.Len())
}

func TestRestartedPeerDefersToTheHeirsNewerState(t *testing.T) {
	c, ctx := startCluster(t, Options{Peers: 16, DataDir: t.TempDir()})
	key := mustKey(t, "alpha", 0)
	victim := c.HostOf(key)
	x := NewExclusion()
	stop := make(chan struct{})
	wg := contend(ctx, t, x, notAmong(c, 4, victim), logical.Sigma, []string{"alpha"}, stop)
	time.Sleep(time.Second)
	c.Kill(victim.Index)
	time.Sleep(2 * time.Second) // the heir serves replica 0 in a new incarnation
	heir := c.HostOf(key)
	fresh, ok := replicaOn(heir, "sigma", "alpha", 0)
	if !ok {
		t.Fatal("no heir hosts replica 0")
	}
	if err := c.Restart(ctx, victim.Index); err != nil {
		t.Fatal(err)
	}
	if r, ok := replicaOn(victim, "sigma", "alpha", 0); !ok || r.Origin != logical.OriginRestored {
		t.Fatalf("the restarted peer did not restore replica 0: %+v", r)
	}
	time.Sleep(3 * time.Second) // the heir hands its newer state back
	close(stop)
	wg.Wait()
	if o := x.Overlaps(); len(o) > 0 {
		t.Fatalf("%d overlapping sections, first: %v", len(o), o[0])
	}
	back, ok := replicaOn(victim, "sigma", "alpha", 0)
	if !ok || back.Origin != logical.OriginHandOff || back.Incarnation != fresh.Incarnation {
		t.Fatalf("replica 0 on the restarted peer: %+v; want the heir's incarnation %d handed back", back, fresh.Incarnation)
	}
	if _, still := replicaOn(heir, "sigma", "alpha", 0); still {
		t.Fatal("the heir still hosts replica 0")
	}
	t.Logf("%d critical sections, no overlap; replica 0 went to peer %d and back", x.Entries(), heir.Index)
}
