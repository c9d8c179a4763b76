package sim

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/dhtsync/dhtsync/core"
	"github.com/dhtsync/dhtsync/ordering"
)

// OrderingScenario is one simulated run of a replicated object.
type OrderingScenario struct {
	Name   string
	Config ordering.Config // N, B, Object, ...
	// Contend is the mutex the ordering threads contend through (its replicas
	// live beside the ordering servers): the backoff mutex, or Sigma.
	Contend Protocol
	Net     Network
	// Byzantine replicas (the lowest indices) lie as Lie.
	Byzantine int
	Lie       OrderingLie
	// ResetLifetime is the mean lifetime of a correct replica's incarnation (0: no resets).
	ResetLifetime time.Duration
	// StableAfter ends network trouble: from then on, no loss and delays from Stable.
	StableAfter core.Time
	Stable      Dist
	// Clients each submit OpsPerClient operations, one at a time, made by Ops,
	// after a think time drawn from Think.
	Clients, OpsPerClient int
	Think                 Dist
	Ops                   func(rng *rand.Rand) []byte
	MaxTime               time.Duration
}

// OrderingResult is what a run produced.
type OrderingResult struct {
	// History is every submitted operation for porcupine: Input the operation,
	// Output an OrderingOutput.
	History   []porcupine.Operation
	Submitted int
	Done      int
	Completed bool
	Messages  uint64
	End       core.Time
	// Versions is the highest version committed at a correct replica.
	Versions uint64
	// ChainErr reports a committed state that does not derive from the state
	// committed at the version before, or two states committed at one version.
	ChainErr error
	// Lost counts operations reported done whose effect the final committed
	// state does not reflect.
	Lost int
	Wall time.Duration
}

// OrderingOutput is a history entry's output.
type OrderingOutput struct {
	Result  []byte
	Unknown bool // the operation did not complete: it may or may not have taken effect
}

// RunOrdering runs sc with seed.
func RunOrdering(seed uint64, sc OrderingScenario, trace io.Writer) (OrderingResult, error) {
	if err := sc.Config.Validate(); err != nil {
		return OrderingResult{}, err
	}
	if sc.Clients < 1 || sc.OpsPerClient < 1 || sc.Ops == nil || sc.Byzantine < 0 || sc.Byzantine > sc.Config.N ||
		sc.Contend == nil || sc.Contend.Replicas() != sc.Config.N {
		return OrderingResult{}, errors.New("sim: an ordering scenario needs clients, operations, at most N liars and a mutex over the same N replicas")
	}
	start := time.Now()
	s := New(seed, sc.Net)
	s.Trace = trace
	chain := newChain()
	for i := range sc.Config.N {
		node, err := orderingReplica(sc, i, false, s.NewRand(), chain)
		if err != nil {
			return OrderingResult{}, err
		}
		s.Add(core.ReplicaAddr(i), node)
		if i >= sc.Byzantine && sc.ResetLifetime > 0 {
			rng := s.NewRand()
			scheduleResets(s, core.ReplicaAddr(i), sc.ResetLifetime, rng, func() (core.Node, error) {
				return orderingReplica(sc, i, true, rng, chain)
			})
		}
	}
	if sc.StableAfter > 0 {
		s.At(sc.StableAfter, func() { s.net.Loss, s.net.Reorder, s.net.Partitions, s.net.Delay = 0, 0, nil, sc.Stable })
	}
	d := &orderingDriver{s: s, sc: sc, rng: s.NewRand(), calls: map[ordering.OpID]int{}}
	for i := range sc.Clients {
		id := ClientName(i)
		mc, err := sc.Contend.NewClient(id, s.NewRand())
		if err != nil {
			return OrderingResult{}, err
		}
		c, err := ordering.NewClient(sc.Config, id, mc)
		if err != nil {
			return OrderingResult{}, err
		}
		s.Add(core.ClientAddr(id), c)
		d.clients = append(d.clients, &orderingClient{index: i, core: c, left: sc.OpsPerClient})
	}
	s.OnEvent = d.onEvent
	for _, c := range d.clients {
		d.next(c)
	}
	maxTime := sc.MaxTime
	if maxTime == 0 {
		maxTime = time.Hour
	}
	s.Run(core.Time(maxTime))
	r := OrderingResult{History: d.history, Submitted: len(d.history), Done: d.done, Messages: s.Stats.Sent, End: s.Now(),
		Completed: d.done == sc.Clients*sc.OpsPerClient}
	for i := range r.History {
		if r.History[i].Return == math.MaxInt64 {
			r.History[i].Output = OrderingOutput{Unknown: true}
		}
	}
	r.Versions, r.ChainErr = chain.check()
	r.Lost = d.lost(chain.final())
	r.Wall = time.Since(start)
	return r, nil
}

// orderingReplica builds replica i: a liar below sc.Byzantine, else a correct
// replica whose commits the chain records.
func orderingReplica(sc OrderingScenario, i int, reset bool, rng *rand.Rand, chain *chain) (core.Node, error) {
	srv, err := ordering.NewServer(sc.Config, reset)
	if err != nil {
		return nil, err
	}
	mtx, err := sc.Contend.NewReplica(i, 0, rng)
	if err != nil {
		return nil, err
	}
	replica := &ordering.Replica{Server: srv, Mutex: mtx}
	if i < sc.Byzantine {
		return newOrderingLiar(replica, sc.Lie, rng)
	}
	return &committedObserver{Replica: replica, chain: chain}, nil
}

type orderingClient struct {
	index   int
	core    *ordering.Client
	left    int
	pending ordering.OpID
}

type orderingDriver struct {
	s       *Sim
	sc      OrderingScenario
	rng     *rand.Rand
	clients []*orderingClient
	history []porcupine.Operation
	calls   map[ordering.OpID]int // index in history
	done    int
}

// next schedules client c's next operation after a think time.
func (d *orderingDriver) next(c *orderingClient) {
	if c.left == 0 {
		if d.done == d.sc.Clients*d.sc.OpsPerClient {
			d.s.Stop()
		}
		return
	}
	c.left--
	var think time.Duration
	if d.sc.Think != nil {
		think = d.sc.Think.Sample(d.rng)
	}
	d.s.At(d.s.Now().Add(think), func() {
		body := d.sc.Ops(d.rng)
		d.s.Do(core.ClientAddr(c.core.ID()), func(_ core.Node, out core.Sink) {
			id := c.core.Submit(d.s.Now(), body, out)
			d.calls[id] = len(d.history)
			d.history = append(d.history, porcupine.Operation{ClientId: c.index, Input: body,
				Call: int64(d.s.Now()), Return: math.MaxInt64})
		})
	})
}

func (d *orderingDriver) onEvent(from core.Addr, e core.Event) {
	done, ok := e.(ordering.Done)
	if !ok {
		return
	}
	i, ok := d.calls[done.ID]
	if !ok {
		return
	}
	d.history[i].Output, d.history[i].Return = OrderingOutput{Result: done.Result}, int64(d.s.Now())
	d.done++
	for _, c := range d.clients {
		if c.core.ID() == from.Client {
			d.next(c)
		}
	}
}

// lost counts completed operations the final state does not reflect.
func (d *orderingDriver) lost(final *ordering.Snapshot) int {
	if final == nil {
		return 0
	}
	n := 0
	for id, i := range d.calls {
		if d.history[i].Return != math.MaxInt64 && !final.Reflects(id) {
			n++
		}
	}
	return n
}

// chain records every state committed at a correct replica.
type chain struct {
	byVersion map[uint64]*ordering.Snapshot
	conflict  error
}

func newChain() *chain {
	return &chain{byVersion: map[uint64]*ordering.Snapshot{0: ordering.Initial()}}
}

func (c *chain) record(s *ordering.Snapshot) {
	if old, ok := c.byVersion[s.Version]; ok && old.Digest() != s.Digest() && c.conflict == nil {
		c.conflict = fmt.Errorf("two different states committed at version %d", s.Version)
	}
	if _, ok := c.byVersion[s.Version]; !ok {
		c.byVersion[s.Version] = s
	}
}

// check verifies that each committed version derives from the one before.
func (c *chain) check() (uint64, error) {
	top := uint64(0)
	for v := range c.byVersion {
		top = max(top, v)
	}
	if c.conflict != nil {
		return top, c.conflict
	}
	for v := uint64(1); v <= top; v++ {
		s, prev := c.byVersion[v], c.byVersion[v-1]
		if s == nil || prev == nil {
			return top, fmt.Errorf("version %d committed but version %d never was", top, v)
		}
		if s.Parent != prev.Digest() {
			return top, fmt.Errorf("version %d does not derive from version %d", v, v-1)
		}
	}
	return top, nil
}

func (c *chain) final() *ordering.Snapshot {
	var top *ordering.Snapshot
	for _, s := range c.byVersion {
		if top == nil || s.Version > top.Version {
			top = s
		}
	}
	return top
}

// committedObserver records the commits of a correct replica.
type committedObserver struct {
	*ordering.Replica
	chain *chain
}

func (o *committedObserver) Receive(now core.Time, from core.Addr, m core.Message, out core.Sink) {
	before := o.Server.Committed()
	o.Replica.Receive(now, from, m, out)
	if after := o.Server.Committed(); after != before {
		o.chain.record(after)
	}
}
