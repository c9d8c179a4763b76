package cluster

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	kb "github.com/libp2p/go-libp2p-kbucket"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/dhtsync/dhtsync/core"
	"github.com/dhtsync/dhtsync/logical"
	"github.com/dhtsync/dhtsync/mutex/backoff"
	"github.com/dhtsync/dhtsync/p2p/wire"
	"github.com/dhtsync/dhtsync/p2p/wire/pb"
)

// rawStream is a hand-driven stream from an outside peer on the mock network.
type rawStream struct {
	t  *testing.T
	s  network.Stream
	r  *bufio.Reader
	me peer.ID
}

func openRaw(ctx context.Context, t *testing.T, c *Cluster, to *Member) *rawStream {
	t.Helper()
	h, err := c.mn.GenPeer()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.mn.LinkPeers(h.ID(), to.host.ID()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.mn.ConnectPeers(h.ID(), to.host.ID()); err != nil {
		t.Fatal(err)
	}
	s, err := h.NewStream(ctx, to.host.ID(), wire.Backoff)
	if err != nil {
		t.Fatal(err)
	}
	return &rawStream{t: t, s: s, r: bufio.NewReader(s), me: h.ID()}
}

func (r *rawStream) write(b []byte) {
	r.t.Helper()
	if _, err := r.s.Write(b); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rawStream) send(e wire.Envelope) {
	r.t.Helper()
	env, err := wire.Encode(e)
	if err != nil {
		r.t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := wire.WriteFrame(&buf, env, wire.MaxMessage); err != nil {
		r.t.Fatal(err)
	}
	r.write(buf.Bytes())
}

func (r *rawStream) read() (wire.Envelope, error) {
	_ = r.s.SetReadDeadline(time.Now().Add(5 * time.Second))
	env, err := wire.ReadFrame(r.r, wire.MaxMessage)
	if err != nil {
		return wire.Envelope{}, err
	}
	return wire.Decode(env)
}

func (r *rawStream) expectError(code pb.Error_Code) {
	r.t.Helper()
	e, err := r.read()
	if err != nil {
		r.t.Fatalf("want an error %s, got %v", code, err)
	}
	if m, ok := e.Msg.(wire.Error); !ok || m.Code != code {
		r.t.Fatalf("want an error %s, got %T %+v", code, e.Msg, e.Msg)
	}
}

// hostedResource returns a resource whose replica 0 member m ought to host.
func hostedResource(t *testing.T, c *Cluster, m *Member, hosted bool) string {
	for i := range 10000 {
		r := "res-" + string(rune('a'+i%26)) + strings.Repeat("x", i/26)
		if (c.HostOf(mustKey(t, r, 0)) == m) == hosted {
			return r
		}
	}
	t.Fatal("no such resource")
	return ""
}

func TestBadInputLeavesThePeerServing(t *testing.T) {
	cfg := logical.DefaultConfig(testDelay)
	cfg.Transport.IdleTimeout = 2 * time.Second // above the grace period, which delays the first reply
	c, ctx := startCluster(t, Options{Peers: 16, Config: cfg})
	target := c.Live()[3]
	mine, theirs := hostedResource(t, c, target, true), hostedResource(t, c, target, false)
	raw := openRaw(ctx, t, c, target)
	me := core.ClientAddr(core.ClientID(raw.me.String() + "/x"))
	try := backoff.Try{Round: 1, Lease: 500 * time.Millisecond}

	t.Run("garbage frame", func(t *testing.T) {
		raw.write([]byte{3, 0xff, 0xff, 0xff})
		raw.expectError(pb.Error_MALFORMED)
	})
	t.Run("envelope with no message", func(t *testing.T) {
		raw.write([]byte{0})
		raw.expectError(pb.Error_MALFORMED)
	})
	t.Run("client of another peer", func(t *testing.T) {
		other := core.ClientAddr(core.ClientID(c.Live()[0].ID().String() + "/lock-1"))
		raw.send(wire.Envelope{Resource: mine, From: other, To: core.ReplicaAddr(0), Msg: try})
		raw.expectError(pb.Error_UNAUTHENTICATED)
	})
	t.Run("replica index out of range", func(t *testing.T) {
		raw.send(wire.Envelope{Resource: mine, From: me, To: core.ReplicaAddr(99), Msg: try})
		raw.expectError(pb.Error_MALFORMED)
	})
	t.Run("hosted key is served", func(t *testing.T) {
		raw.send(wire.Envelope{Resource: mine, From: me, To: core.ReplicaAddr(0), Msg: try})
		e, err := raw.read()
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := e.Msg.(backoff.TryReply); !ok {
			t.Fatalf("want a TryReply, got %T %+v", e.Msg, e.Msg)
		}
	})
	t.Run("key hosted elsewhere is redirected", func(t *testing.T) {
		raw.send(wire.Envelope{Resource: theirs, From: me, To: core.ReplicaAddr(0), Msg: try})
		e, err := raw.read()
		if err != nil {
			t.Fatal(err)
		}
		m, ok := e.Msg.(wire.Redirect)
		if !ok || len(m.Closer) == 0 {
			t.Fatalf("want a redirect, got %T %+v", e.Msg, e.Msg)
		}
		if id, _ := peer.IDFromBytes(m.Closer[0].Id); id != c.HostOf(mustKey(t, theirs, 0)).ID() {
			t.Fatalf("redirected to %s, want the closest peer", id)
		}
	})
	t.Run("oversized frame", func(t *testing.T) {
		raw.write(binary.AppendUvarint(nil, 64<<20))
		raw.expectError(pb.Error_MALFORMED)
		if _, err := raw.read(); err == nil {
			t.Fatal("the stream survived an oversized frame: it is out of step")
		}
	})
	t.Run("stalled stream", func(t *testing.T) {
		stalled := openRaw(ctx, t, c, target)
		stalled.write([]byte{100, 1, 2, 3}) // a frame of 100 bytes that never comes
		start := time.Now()
		_, err := stalled.read()
		if err == nil || errors.Is(err, wire.ErrMalformed) {
			t.Fatalf("want the stream reset, got %v", err)
		}
		t.Logf("stalled stream reset after %v (idle timeout 2 s)", time.Since(start).Round(time.Millisecond))
	})
	t.Run("unknown protocol version", func(t *testing.T) {
		h, err := c.mn.GenPeer()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.mn.LinkPeers(h.ID(), target.ID()); err != nil {
			t.Fatal(err)
		}
		_, err = h.NewStream(ctx, target.ID(), "/dhtsync/mutex/backoff/9.0.0")
		if err == nil || !strings.Contains(err.Error(), "protocols not supported") {
			t.Fatalf("want a refused negotiation, got %v", err)
		}
	})
	t.Run("answers forged for a replica the sender does not host", func(t *testing.T) {
		raw := openRaw(ctx, t, c, target) // the first stream was closed above
		// A resource whose replica 0 has a peer other than the target closer
		// than the raw peer.
		ids := []peer.ID{raw.me}
		for _, m := range c.Live() {
			if m != target {
				ids = append(ids, m.ID())
			}
		}
		var forged string
		for i := 0; forged == ""; i++ {
			r := fmt.Sprintf("forged-%d", i)
			k := mustKey(t, r, 0)
			if kb.SortClosestPeers(ids, kb.ConvertKey(string(k[:])))[0] != raw.me {
				forged = r
			}
		}
		before := target.Stats().Spoofed
		victim := core.ClientAddr(logical.ClientName(target.ID(), "lock-1"))
		raw.send(wire.Envelope{Resource: forged, From: core.ReplicaAddr(0), To: victim, Msg: backoff.TryReply{Round: 1, Free: true}})
		for deadline := time.Now().Add(5 * time.Second); target.Stats().Spoofed == before; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("a forged replica answer was not refused")
			}
		}
	})
	t.Run("bad calls are errors", func(t *testing.T) {
		p := c.Live()[0]
		if _, err := p.Lock(ctx, "paxos", mine); err == nil || !strings.Contains(err.Error(), "unknown mutex protocol") {
			t.Fatalf("unknown protocol: %v", err)
		}
		if _, err := p.Lock(ctx, logical.Sigma, ""); err == nil {
			t.Fatal("an empty resource name was accepted")
		}
		if _, err := p.Object(strings.Repeat("x", logical.MaxResourceLen+1)); err == nil {
			t.Fatal("an oversized resource name was accepted")
		}
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := p.Lock(cancelled, logical.Sigma, mine); !errors.Is(err, context.Canceled) {
			t.Fatalf("a cancelled lock returned %v", err)
		}
	})
	t.Run("the peer still serves", func(t *testing.T) {
		x := NewExclusion()
		for _, kind := range []logical.Kind{logical.Backoff, logical.Sigma} {
			if err := x.Section(ctx, c.Live()[0], kind, mine, time.Millisecond); err != nil {
				t.Fatal(err)
			}
		}
		if target.Stats().Malformed == 0 || target.Stats().Rejected == 0 || target.Stats().Redirects == 0 {
			t.Fatalf("counters: %+v", target.Stats())
		}
	})
}
