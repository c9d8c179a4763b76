package sim

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/dhtsync/dhtsync/core"
	"github.com/dhtsync/dhtsync/mutex/backoff"
	"github.com/dhtsync/dhtsync/mutex/sigma"
	"github.com/dhtsync/dhtsync/ordering"
)

const orderingDelta = 10 * time.Millisecond

// orderingScenario: n = 7, b = 1, five clients with 20 operations each, a lossy
// and partly asynchronous network for the first two seconds (one message in
// fifty lost, one in ten late by up to 5δ), synchronous after.
func orderingScenario(name string, obj ordering.Object, ops func(*rand.Rand) []byte) OrderingScenario {
	return OrderingScenario{
		Name:    name,
		Config:  ordering.Config{N: 7, B: 1, Object: obj, MaxDelay: orderingDelta},
		Contend: Backoff{Config: backoff.Config{N: 7, B: 1, Lease: 5 * orderingDelta, MaxDelay: orderingDelta, EarlyRelease: true}},
		Net: Network{Delay: Uniform{orderingDelta / 10, orderingDelta}, Loss: 0.02, Duplicate: 0.01,
			Reorder: 0.1, ReorderBy: 5 * orderingDelta},
		StableAfter: core.Time(2 * time.Second), Stable: Uniform{orderingDelta / 10, orderingDelta},
		Clients: 5, OpsPerClient: 20, Think: Uniform{0, 2 * orderingDelta}, Ops: ops, MaxTime: 10 * time.Minute,
	}
}

// checkOrdering checks one run: linearizable against model, every committed
// state derived from the one before, nothing completed then lost, and (if live)
// every operation completed. A failure prints the seed and writes porcupine's
// visualization.
func checkOrdering(t *testing.T, sc OrderingScenario, model porcupine.Model, seed uint64, live bool) OrderingResult {
	t.Helper()
	r, err := RunOrdering(seed, sc, nil)
	if err != nil {
		t.Fatalf("%s seed %d: %v", sc.Name, seed, err)
	}
	res, info := porcupine.CheckOperationsVerbose(model, r.History, 10*time.Second)
	if res != porcupine.Ok || r.ChainErr != nil || r.Lost > 0 || (live && !r.Completed) {
		dir := os.Getenv("DHTSYNC_TRACE_DIR")
		if dir == "" {
			dir = t.TempDir()
		}
		path := filepath.Join(dir, fmt.Sprintf("%s-seed%d.html", sc.Name, seed))
		_ = porcupine.VisualizePath(model, info, path)
		t.Errorf("%s seed %d: linearizable %v, chain %v, lost %d, done %d/%d; visualization in %s",
			sc.Name, seed, res, r.ChainErr, r.Lost, r.Done, sc.Clients*sc.OpsPerClient, path)
	}
	return r
}

func TestOrderingIsLinearizable(t *testing.T) {
	seeds := 100
	if testing.Short() {
		seeds = 10
	}
	for _, c := range []struct {
		obj   ordering.Object
		model porcupine.Model
		ops   func(*rand.Rand) []byte
	}{{ordering.Counter{}, CounterModel, CounterOps}, {ordering.KV{}, KVModel, KVOps}} {
		sc := orderingScenario("ordering-"+c.obj.Name(), c.obj, c.ops)
		ops, versions := 0, uint64(0)
		for seed := range uint64(seeds) {
			r := checkOrdering(t, sc, c.model, seed, true)
			ops, versions = ops+r.Done, versions+r.Versions
		}
		t.Logf("%s: %d operations in %d committed versions over %d seeds", c.obj.Name(), ops, versions, seeds)
		if ops < 10000 && !testing.Short() {
			t.Errorf("only %d operations", ops)
		}
	}
}

// b Byzantine replicas, each lie in turn: stale states, forged ranks, fake
// pending operations, lying rank exceptions, equivocation.
func TestOrderingToleratesByzantineReplicas(t *testing.T) {
	seeds := 100
	if testing.Short() {
		seeds = 10
	}
	for _, lie := range OrderingLies {
		sc := orderingScenario("ordering-"+string(lie), ordering.Counter{}, CounterOps)
		sc.Byzantine, sc.Lie = 1, lie
		sc.OpsPerClient = 10
		for seed := range uint64(seeds) {
			checkOrdering(t, sc, CounterModel, seed, true)
		}
	}
}

// Replica resets at a rate where most replicas reset between commits (several
// hundred resets a run). With
// recovery a new incarnation first copies the committed state from b+1
// agreeing replicas and nothing committed is lost; without it, a reset replica
// restarts from the initial state, and once a quorum's answers rest on such
// replicas an old state is extended and committed operations disappear.
func TestOrderingSurvivesChurnOnlyWithRecovery(t *testing.T) {
	run := func(recovery bool) (resets, broken int) {
		sc := orderingScenario(fmt.Sprintf("ordering-churn-recovery-%v", recovery), ordering.Counter{}, CounterOps)
		// Every replica lives 1 s on average and clients think 1–3 s between
		// operations, so most replicas reset between two commits, but seldom two
		// within the few milliseconds a recovery takes.
		sc.ResetLifetime = time.Second
		sc.Think = Uniform{time.Second, 3 * time.Second}
		sc.Config.NoRecovery = !recovery
		for seed := range uint64(40) {
			if recovery {
				checkOrdering(t, sc, CounterModel, seed, true)
				continue
			}
			r, err := RunOrdering(seed, sc, nil)
			if err != nil {
				t.Fatal(err)
			}
			if r.Lost > 0 || r.ChainErr != nil || !porcupine.CheckOperations(CounterModel, r.History) {
				broken++
			}
		}
		return 0, broken
	}
	run(true)
	if _, broken := run(false); broken == 0 {
		t.Error("without recovery no run lost anything: the test does not show what recovery prevents")
	} else {
		t.Logf("without recovery %d of 40 runs lost committed operations or forked the state", broken)
	}
}

// The same seed gives the same run, ordering included.
func TestOrderingRunsReplay(t *testing.T) {
	sc := orderingScenario("ordering-replay", ordering.KV{}, KVOps)
	sc.ResetLifetime, sc.Byzantine, sc.Lie = time.Second, 1, Equivocate
	var a, b bytes.Buffer
	ra, _ := RunOrdering(3, sc, &a)
	rb, _ := RunOrdering(3, sc, &b)
	if a.Len() == 0 || !bytes.Equal(a.Bytes(), b.Bytes()) || ra.Done != rb.Done {
		t.Fatalf("seed 3 replayed differently (%d vs %d trace bytes)", a.Len(), b.Len())
	}
	r, _ := RunOrdering(3, sc, nil)
	if r.Done != ra.Done || r.Messages != ra.Messages {
		t.Fatalf("tracing changed the run: %d/%d done, %d/%d messages", r.Done, ra.Done, r.Messages, ra.Messages)
	}
}

// The checkers catch a wrong history: change one completed result, or fork
// the committed chain, and they must object (else the tests above prove nothing).
func TestOrderingCheckersCatchCorruption(t *testing.T) {
	sc := orderingScenario("ordering-corrupt", ordering.Counter{}, CounterOps)
	r, err := RunOrdering(1, sc, nil)
	if err != nil || !porcupine.CheckOperations(CounterModel, r.History) {
		t.Fatalf("the honest run must pass: %v", err)
	}
	for i := range r.History {
		out := r.History[i].Output.(OrderingOutput)
		if add, read, _ := ordering.DecodeCounterOp(r.History[i].Input.([]byte)); read || add == 0 || out.Unknown {
			continue
		}
		out.Result = ordering.CounterResult(0) // impossible after an add of at least 1
		r.History[i].Output = out
		break
	}
	if porcupine.CheckOperations(CounterModel, r.History) {
		t.Error("porcupine accepted a history with a forged result")
	}
	c := newChain()
	v1 := ordering.Derive(ordering.Counter{}, ordering.Initial(), []ordering.Op{{ID: ordering.OpID{Client: "a", Seq: 1}, Body: ordering.CounterAdd(1)}}, 8)
	other := ordering.Derive(ordering.Counter{}, ordering.Initial(), []ordering.Op{{ID: ordering.OpID{Client: "b", Seq: 1}, Body: ordering.CounterAdd(2)}}, 8)
	c.record(v1)
	c.record(other)
	if _, err := c.check(); err == nil {
		t.Error("the chain check accepted two states at one version")
	}
	orphan := ordering.Derive(ordering.Counter{}, other, []ordering.Op{{ID: ordering.OpID{Client: "b", Seq: 2}, Body: ordering.CounterAdd(2)}}, 8)
	c = newChain()
	c.record(v1)
	c.record(orphan)
	if _, err := c.check(); err == nil {
		t.Error("the chain check accepted a state derived from one never committed")
	}
}

// The ordering threads can contend through Sigma instead of the backoff mutex:
// the mutex only serves liveness, so any correct one will do.
func TestOrderingContendingThroughSigma(t *testing.T) {
	sc := orderingScenario("ordering-sigma", ordering.KV{}, KVOps)
	sc.Contend = Sigma{Config: sigma.Config{N: 7, M: 5, Lease: 5 * orderingDelta, MaxDelay: orderingDelta}}
	for seed := range uint64(20) {
		checkOrdering(t, sc, KVModel, seed, true)
	}
}
