package logical

import (
	"context"
	"fmt"
	"sync"

	"github.com/dhtsync/dhtsync/core"
	"github.com/dhtsync/dhtsync/mutex/sigma"
	"github.com/dhtsync/dhtsync/ordering"
	"github.com/dhtsync/dhtsync/p2p"
	"github.com/dhtsync/dhtsync/p2p/wire"
)

// Object is a client of a replicated object (the deployment's
// Ordering.Object): operations submitted through it are applied in one total
// order by every correct replica.
type Object struct {
	p      *Peer
	key    clientKey
	client *ordering.Client
	runner *p2p.Runner

	mu      sync.Mutex
	waiting map[ordering.OpID]chan []byte
}

// Object opens a client of the object named resource.
func (p *Peer) Object(resource string) (*Object, error) {
	if err := ValidateResource(resource); err != nil {
		return nil, err
	}
	svc := p.services[wire.Ordering]
	id := p.newClientID("object")
	m, err := sigma.NewClient(p.cfg.OrderingMutex, id)
	if err != nil {
		return nil, err
	}
	c, err := ordering.NewClient(p.cfg.Ordering, id, m)
	if err != nil {
		return nil, err
	}
	o := &Object{p: p, key: clientKey{svc.name, resource, id}, client: c, waiting: map[ordering.OpID]chan []byte{}}
	o.runner = p2p.NewRunner(c, p2p.Outputs{
		Send: func(to core.Addr, msg core.Message) { p.send(svc, resource, core.ClientAddr(id), to, msg) },
		Emit: o.event,
	})
	p.register(o.key, o.runner)
	return o, nil
}

func (o *Object) event(e core.Event) {
	done, ok := e.(ordering.Done)
	if !ok {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if ch := o.waiting[done.ID]; ch != nil {
		ch <- done.Result // buffered: never blocks
		delete(o.waiting, done.ID)
	}
}

// Submit submits op and returns its result once it is committed. If ctx ends
// first the operation may still be applied later: the replicas hold it.
func (o *Object) Submit(ctx context.Context, op []byte) ([]byte, error) {
	ch := make(chan []byte, 1)
	ok := o.runner.Do(func(now core.Time, out core.Sink) {
		o.mu.Lock()
		defer o.mu.Unlock()
		// Registered before the step's outputs leave, so the Done cannot be missed.
		o.waiting[o.client.Submit(now, op, out)] = ch
	})
	if !ok {
		return nil, fmt.Errorf("logical: object client closed")
	}
	select {
	case r := <-ch:
		return r, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Close stops the client.
func (o *Object) Close() { o.p.unregister(o.key) }
