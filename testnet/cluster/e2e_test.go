package cluster

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/dhtsync/dhtsync/core"
	"github.com/dhtsync/dhtsync/logical"
	"github.com/dhtsync/dhtsync/ordering"
	"github.com/dhtsync/dhtsync/testnet/oracle"
	"github.com/dhtsync/dhtsync/testnet/sim"
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

// exclusion records critical sections of many clients in one oracle; all
// peers share this process's clock.
type exclusion struct {
	mu sync.Mutex
	o  *oracle.Oracle
}

func newExclusion() *exclusion { return &exclusion{o: oracle.New()} }

// section acquires the lock through member m, holds it for hold, and releases.
func (x *exclusion) section(ctx context.Context, m *Member, kind logical.Kind, resource string, hold time.Duration) error {
	l, err := m.Lock(ctx, kind, resource)
	if err != nil {
		return err
	}
	x.mu.Lock()
	err = x.o.Enter(resource+"|"+l.Holder(), p2pNow())
	x.mu.Unlock()
	if err != nil {
		return err
	}
	select {
	case <-time.After(hold):
	case <-l.Done():
	}
	x.mu.Lock()
	end := min(p2pNow(), core.Time(l.Until().UnixNano())) // a lease never outlasts Until
	err = x.o.Exit(resource+"|"+l.Holder(), end)
	x.mu.Unlock()
	l.Unlock()
	return err
}

func p2pNow() core.Time { return core.Time(time.Now().UnixNano()) }

// overlaps are the overlapping sections of the same resource.
func (x *exclusion) overlaps() []oracle.Overlap {
	x.mu.Lock()
	defer x.mu.Unlock()
	var out []oracle.Overlap
	for _, o := range x.o.Overlaps(p2pNow()) {
		if resourceOf(o.Earlier.Holder) == resourceOf(o.Later.Holder) {
			out = append(out, o)
		}
	}
	return out
}

func resourceOf(holder string) string {
	for i := range holder {
		if holder[i] == '|' {
			return holder[:i]
		}
	}
	return holder
}

// contend runs clients on the given members, each entering the critical
// section of one of the resources until stop closes; it returns the entries.
func (x *exclusion) contend(ctx context.Context, t *testing.T, members []*Member, kind logical.Kind, resources []string, stop <-chan struct{}) *sync.WaitGroup {
	var wg sync.WaitGroup
	for i, m := range members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := x.section(ctx, m, kind, resources[i%len(resources)], 5*time.Millisecond); err != nil {
					if ctx.Err() == nil {
						t.Errorf("client on peer %d: %v", m.Index, err)
					}
					return
				}
			}
		}()
	}
	return &wg
}

func TestContendingClientsAreExclusive(t *testing.T) {
	for _, kind := range []logical.Kind{logical.Backoff, logical.Sigma} {
		t.Run(string(kind), func(t *testing.T) {
			c, ctx := startCluster(t, Options{Peers: 16})
			x := newExclusion()
			stop := make(chan struct{})
			wg := x.contend(ctx, t, c.Live()[:6], kind, []string{"alpha", "beta"}, stop)
			time.Sleep(4 * time.Second)
			close(stop)
			wg.Wait()
			if o := x.overlaps(); len(o) > 0 {
				t.Fatalf("%d overlapping sections, first: %v", len(o), o[0])
			}
			if x.o.Entries() < 12 {
				t.Fatalf("only %d critical sections in 4 s", x.o.Entries())
			}
			t.Logf("%d critical sections, no overlap", x.o.Entries())
		})
	}
}

// history records object operations for porcupine.
type history struct {
	mu  sync.Mutex
	ops []porcupine.Operation
}

func (h *history) submit(ctx context.Context, o *logical.Object, client int, op []byte) error {
	call := time.Now().UnixNano()
	res, err := o.Submit(ctx, op)
	ret := time.Now().UnixNano()
	if err != nil {
		return err
	}
	h.mu.Lock()
	h.ops = append(h.ops, porcupine.Operation{ClientId: client, Input: op, Call: call,
		Output: sim.OrderingOutput{Result: res}, Return: ret})
	h.mu.Unlock()
	return nil
}

func (h *history) check(t *testing.T) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	if res := porcupine.CheckOperations(sim.CounterModel, h.ops); !res {
		t.Fatalf("the history of %d operations is not linearizable", len(h.ops))
	}
}

// submitAll has each object client submit perClient additions of 1.
func (h *history) submitAll(ctx context.Context, t *testing.T, objects []*logical.Object, perClient int) {
	var wg sync.WaitGroup
	for i, o := range objects {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range perClient {
				if err := h.submit(ctx, o, i, ordering.CounterAdd(1)); err != nil {
					t.Errorf("client %d: %v", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
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
	res, err := o.Submit(ctx, ordering.CounterGet())
	if err != nil {
		t.Fatal(err)
	}
	v, err := ordering.DecodeCounterResult(res)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestObjectOperationsAreLinearizable(t *testing.T) {
	c, ctx := startCluster(t, Options{Peers: 16})
	objects := openObjects(t, c.Live()[:4], "counter")
	var h history
	h.submitAll(ctx, t, objects, 10)
	h.check(t)
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
			x := newExclusion()
			stop := make(chan struct{})
			wg := x.contend(ctx, t, clients, kind, []string{"alpha"}, stop)
			time.Sleep(1500 * time.Millisecond)
			before, ok := replicaOn(victim, string(kind), "alpha", 0)
			if !ok {
				t.Fatalf("the closest peer does not host replica 0: %v", victim.Replicas())
			}
			entries := x.o.Entries()
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
			if o := x.overlaps(); len(o) > 0 {
				t.Fatalf("%d overlapping sections, first: %v", len(o), o[0])
			}
			if x.o.Entries() <= entries {
				t.Fatal("no critical section after the kill")
			}
			t.Logf("%d sections before the kill, %d after; replica 0 moved to peer %d in incarnation %d",
				entries, x.o.Entries()-entries, heir.Index, after.Incarnation)
		})
	}
}

func TestKillingAnObjectHostLosesNoOperation(t *testing.T) {
	c, ctx := startCluster(t, Options{Peers: 16})
	key := mustKey(t, "counter", 0)
	victim := c.HostOf(key)
	objects := openObjects(t, notAmong(c, 3, victim), "counter")
	var h history
	h.submitAll(ctx, t, objects, 5)
	c.Kill(victim.Index)
	h.submitAll(ctx, t, objects, 5)
	h.check(t)
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
	x := newExclusion()
	if err := x.section(ctx, client, logical.Sigma, "alpha", time.Millisecond); err != nil {
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
	if err := x.section(ctx, client, logical.Sigma, "alpha", time.Millisecond); err != nil {
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
	x := newExclusion()
	if err := x.section(ctx, client, logical.Sigma, "alpha", time.Millisecond); err != nil {
		t.Fatal(err)
	}
	objects := openObjects(t, []*Member{client}, "counter")
	var h history
	h.submitAll(ctx, t, objects, 3)
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
	if err := x.section(ctx, client, logical.Sigma, "alpha", time.Millisecond); err != nil {
		t.Fatal(err)
	}
	h.submitAll(ctx, t, objects, 2)
	h.check(t)
	if v := readCounter(ctx, t, objects[0]); v != 5 {
		t.Fatalf("counter at %d after 5 additions", v)
	}
	if n := host.Stats().NewIncarnations; n != 0 {
		t.Fatalf("the restarted peer started %d new incarnations", n)
	}
}

func TestLoopbackTCP(t *testing.T) {
	c, ctx := startCluster(t, Options{Peers: 16, TCP: true})
	x := newExclusion()
	stop := make(chan struct{})
	wg := x.contend(ctx, t, c.Live()[:4], logical.Sigma, []string{"alpha"}, stop)
	objects := openObjects(t, c.Live()[4:6], "counter")
	var h history
	h.submitAll(ctx, t, objects, 5)
	close(stop)
	wg.Wait()
	h.check(t)
	if o := x.overlaps(); len(o) > 0 || x.o.Entries() == 0 {
		t.Fatalf("%d sections, %d overlaps", x.o.Entries(), len(o))
	}
	t.Log(fmt.Sprintf("%d critical sections and %d operations over loopback TCP", x.o.Entries(), len(h.ops)))
}
