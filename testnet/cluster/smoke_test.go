package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/dhtsync/dhtsync/logical"
)

func TestSmoke(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := New(ctx, Options{Peers: 16, Latency: 5 * time.Millisecond, Config: logical.DefaultConfig(30 * time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []logical.Kind{logical.Backoff, logical.Sigma} {
		for i := range 3 {
			start := time.Now()
			l, err := c.Live()[i].Lock(ctx, kind, "res")
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: acquired in %v until %v rounds %d", kind, time.Since(start), time.Until(l.Until()), l.Rounds())
			l.Unlock()
		}
	}
	o, err := c.Live()[3].Object("obj")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		start := time.Now()
		r, err := o.Submit(ctx, []byte{1, 2})
		t.Logf("submit %d: %x %v in %v", i, r, err, time.Since(start))
	}
	for _, m := range c.Live() {
		t.Logf("%d: %+v %d replicas", m.Index, m.Stats(), len(m.Replicas()))
	}
}
