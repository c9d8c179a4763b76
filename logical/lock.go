package logical

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/dhtsync/dhtsync/core"
	"github.com/dhtsync/dhtsync/mutex"
	"github.com/dhtsync/dhtsync/mutex/backoff"
	"github.com/dhtsync/dhtsync/mutex/sigma"
	"github.com/dhtsync/dhtsync/p2p"
	"github.com/dhtsync/dhtsync/p2p/wire"
)

// Kind selects a mutex protocol.
type Kind string

// The mutex protocols a peer serves.
const (
	Backoff Kind = "backoff" // the backoff mutex: one round trip uncontended, no state between rounds
	Sigma   Kind = "sigma"   // Sigma: queues at the replicas, renewed leases, informed backoff
)

// Lease is a held lock. It lasts until Until unless renewed (Sigma renews
// while it is held); Unlock gives it back early.
type Lease struct {
	p      *Peer
	key    clientKey
	client mutex.Client
	runner *p2p.Runner

	acquired chan struct{} // closed on the first Acquired event
	done     chan struct{} // closed when the lease ends (Unlock or expiry)
	mu       sync.Mutex
	until    time.Time
	rounds   int
	expiry   *time.Timer
	ended    bool
}

// Lock acquires the lock on resource with the given protocol, waiting until it
// is held or ctx ends.
func (p *Peer) Lock(ctx context.Context, kind Kind, resource string) (*Lease, error) {
	if err := ValidateResource(resource); err != nil {
		return nil, err
	}
	var svc *service
	var client mutex.Client
	id := p.newClientID("lock")
	var err error
	switch kind {
	case Backoff:
		svc = p.services[wire.Backoff]
		client, err = backoff.NewClient(p.cfg.Backoff, id, rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())))
	case Sigma:
		svc = p.services[wire.Sigma]
		client, err = sigma.NewClient(p.cfg.Sigma, id)
	default:
		return nil, fmt.Errorf("logical: unknown mutex protocol %q (want %q or %q)", kind, Backoff, Sigma)
	}
	if err != nil {
		return nil, err
	}
	l := &Lease{p: p, key: clientKey{svc.name, resource, id}, client: client,
		acquired: make(chan struct{}), done: make(chan struct{})}
	l.runner = p2p.NewRunner(client, p2p.Outputs{
		Send: func(to core.Addr, m core.Message) { p.send(svc, resource, core.ClientAddr(id), to, m) },
		Emit: l.event,
	})
	p.register(l.key, l.runner)
	l.runner.Do(func(now core.Time, out core.Sink) { err = client.Acquire(now, 0, out) })
	if err != nil {
		p.unregister(l.key)
		return nil, err
	}
	select {
	case <-l.acquired:
		return l, nil
	case <-ctx.Done():
		l.Unlock()
		return nil, ctx.Err()
	case <-p.ctx.Done():
		l.Unlock()
		return nil, fmt.Errorf("logical: peer closed")
	}
}

// event takes the client core's events; it runs under the runner's lock.
func (l *Lease) event(e core.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var until core.Time
	switch e := e.(type) {
	case mutex.Acquired:
		until, l.rounds = e.Until, e.Rounds
		select {
		case <-l.acquired:
		default:
			close(l.acquired)
		}
	case mutex.Extended:
		until = e.Until
	default:
		return
	}
	if l.ended {
		return
	}
	l.until = time.Unix(0, int64(until))
	if l.expiry == nil {
		l.expiry = time.AfterFunc(time.Until(l.until), l.expire)
	} else {
		l.expiry.Reset(time.Until(l.until))
	}
}

// expire ends a lease whose time ran out without renewal.
func (l *Lease) expire() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.ended && !time.Now().Before(l.until) {
		l.ended = true
		close(l.done)
	}
}

// Until is when the lease ends unless renewed.
func (l *Lease) Until() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.until
}

// Rounds is how many contention rounds the acquisition took.
func (l *Lease) Rounds() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rounds
}

// Done is closed when the lease ends: unlocked, or expired without renewal.
// Work that needs exclusion must stop by then.
func (l *Lease) Done() <-chan struct{} { return l.done }

// Holder is the lease's client name, "<peer id>/lock-<n>".
func (l *Lease) Holder() string { return string(l.key.id) }

// Unlock releases the lease. It is safe to call more than once.
func (l *Lease) Unlock() {
	l.runner.Do(func(now core.Time, out core.Sink) { l.client.Release(now, out) })
	l.p.unregister(l.key)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.expiry != nil {
		l.expiry.Stop()
	}
	if !l.ended {
		l.ended = true
		close(l.done)
	}
}
