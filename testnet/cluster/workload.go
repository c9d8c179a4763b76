package cluster

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/dhtsync/dhtsync/core"
	"github.com/dhtsync/dhtsync/logical"
	"github.com/dhtsync/dhtsync/ordering"
	"github.com/dhtsync/dhtsync/p2p"
	"github.com/dhtsync/dhtsync/testnet/oracle"
	"github.com/dhtsync/dhtsync/testnet/sim"
)

// Exclusion records the critical sections of many lock clients in one
// oracle. All peers of a cluster share this process's clock, so the oracle
// sees true real-time order.
type Exclusion struct {
	mu       sync.Mutex
	o        *oracle.Oracle
	acquires []time.Duration
}

// NewExclusion returns an empty record.
func NewExclusion() *Exclusion { return &Exclusion{o: oracle.New()} }

// Section acquires the lock on resource through member m, holds it for hold
// (or until the lease ends), and releases it.
func (x *Exclusion) Section(ctx context.Context, m *Member, kind logical.Kind, resource string, hold time.Duration) error {
	start := time.Now()
	l, err := m.Lock(ctx, kind, resource)
	if err != nil {
		return err
	}
	holder := string(kind) + " " + resource + "|" + l.Holder()
	x.mu.Lock()
	x.acquires = append(x.acquires, time.Since(start))
	err = x.o.Enter(holder, p2p.Now())
	x.mu.Unlock()
	if err != nil {
		return err
	}
	select {
	case <-time.After(hold):
	case <-l.Done():
	}
	x.mu.Lock()
	end := min(p2p.Now(), core.Time(l.Until().UnixNano())) // a lease never outlasts Until
	err = x.o.Exit(holder, end)
	x.mu.Unlock()
	l.Unlock()
	return err
}

// Overlaps are the overlapping sections of the same lock.
func (x *Exclusion) Overlaps() []oracle.Overlap {
	x.mu.Lock()
	defer x.mu.Unlock()
	var out []oracle.Overlap
	for _, o := range x.o.Overlaps(p2p.Now()) {
		if lockOf(o.Earlier.Holder) == lockOf(o.Later.Holder) {
			out = append(out, o)
		}
	}
	return out
}

func lockOf(holder string) string { l, _, _ := strings.Cut(holder, "|"); return l }

// Entries is the number of completed critical sections.
func (x *Exclusion) Entries() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.o.Entries()
}

// AcquireTimes are the times Lock took, sorted.
func (x *Exclusion) AcquireTimes() []time.Duration {
	x.mu.Lock()
	defer x.mu.Unlock()
	out := slices.Clone(x.acquires)
	slices.Sort(out)
	return out
}

// Contend runs one client per member, each entering the critical section of
// one of the resources (round robin) again and again until stop closes. Errors
// other than ctx's end go to report.
func (x *Exclusion) Contend(ctx context.Context, members []*Member, kind logical.Kind, resources []string,
	hold time.Duration, stop <-chan struct{}, report func(error)) *sync.WaitGroup {
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
				if err := x.Section(ctx, m, kind, resources[i%len(resources)], hold); err != nil {
					if ctx.Err() == nil {
						report(fmt.Errorf("lock client on peer %d: %w", m.Index, err))
					}
					return
				}
			}
		}()
	}
	return &wg
}

// History records the operations on counter objects for porcupine.
type History struct {
	mu  sync.Mutex
	ops []porcupine.Operation
	lat []time.Duration
}

// Submit submits op through o as client number client and records it.
func (h *History) Submit(ctx context.Context, o *logical.Object, client int, op []byte) error {
	call := time.Now()
	res, err := o.Submit(ctx, op)
	ret := time.Now()
	if err != nil {
		return err
	}
	h.mu.Lock()
	h.ops = append(h.ops, porcupine.Operation{ClientId: client, Input: op, Call: call.UnixNano(),
		Output: sim.OrderingOutput{Result: res}, Return: ret.UnixNano()})
	h.lat = append(h.lat, ret.Sub(call))
	h.mu.Unlock()
	return nil
}

// SubmitEach has every object client submit additions of 1 until stop
// closes or, with stop nil, perClient of them.
func (h *History) SubmitEach(ctx context.Context, objects []*logical.Object, perClient int, stop <-chan struct{}, report func(error)) *sync.WaitGroup {
	var wg sync.WaitGroup
	for i, o := range objects {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; stop != nil || n < perClient; n++ {
				select {
				case <-stop:
					return
				default:
				}
				if err := h.Submit(ctx, o, i, ordering.CounterAdd(1)); err != nil {
					if ctx.Err() == nil {
						report(fmt.Errorf("object client %d: %w", i, err))
					}
					return
				}
			}
		}()
	}
	return &wg
}

// Len is the number of completed operations.
func (h *History) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.ops)
}

// Linearizable checks the history against the counter's specification.
func (h *History) Linearizable() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return porcupine.CheckOperations(sim.CounterModel, h.ops)
}

// Latencies are the operations' latencies, sorted.
func (h *History) Latencies() []time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := slices.Clone(h.lat)
	slices.Sort(out)
	return out
}

// ReadCounter reads a counter object's value.
func ReadCounter(ctx context.Context, o *logical.Object) (int64, error) {
	res, err := o.Submit(ctx, ordering.CounterGet())
	if err != nil {
		return 0, err
	}
	return ordering.DecodeCounterResult(res)
}
