package p2p

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	mocknet "github.com/libp2p/go-libp2p/p2p/net/mock"

	"github.com/dhtsync/dhtsync/core"
	"github.com/dhtsync/dhtsync/p2p/wire"
	"github.com/dhtsync/dhtsync/p2p/wire/pb"
)

// echo is a core that answers every message with the same message and emits
// a timer's firing.
type echo struct{}

func (echo) Receive(now core.Time, from core.Addr, m core.Message, out core.Sink) {
	out.Send(from, m)
	out.SetTimer(now.Add(10*time.Millisecond), core.Timer{Kind: 7})
}
func (echo) Wake(now core.Time, t core.Timer, out core.Sink) { out.Emit(t) }

func TestRunnerDrivesACoreWithTheWallClock(t *testing.T) {
	var mu sync.Mutex
	var sent []core.Message
	fired := make(chan core.Event, 1)
	steps := 0
	r := NewRunner(echo{}, Outputs{
		Send:      func(_ core.Addr, m core.Message) { mu.Lock(); sent = append(sent, m); mu.Unlock() },
		Emit:      func(e core.Event) { fired <- e },
		AfterStep: func() { steps++ },
	})
	r.Receive(core.ClientAddr("c"), "hello")
	select {
	case e := <-fired:
		if e != (core.Timer{Kind: 7}) {
			t.Fatalf("fired %v", e)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the timer never fired")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(sent) != 1 || sent[0] != "hello" || steps != 2 {
		t.Fatalf("sent %v in %d steps", sent, steps)
	}
}

func TestClosedRunnerTakesNoSteps(t *testing.T) {
	fired := make(chan core.Event, 1)
	r := NewRunner(echo{}, Outputs{Send: func(core.Addr, core.Message) {}, Emit: func(e core.Event) { fired <- e }})
	r.Receive(core.ClientAddr("c"), "x") // arms a timer
	r.Close()
	if r.Do(func(core.Time, core.Sink) { t.Fatal("a step ran after Close") }) {
		t.Fatal("Do reported a step after Close")
	}
	select {
	case <-fired:
		t.Fatal("a timer fired after Close")
	case <-time.After(50 * time.Millisecond):
	}
}

func TestTransportCarriesEnvelopesBothWays(t *testing.T) {
	mn, err := mocknet.FullMeshLinked(2)
	if err != nil {
		t.Fatal(err)
	}
	defer mn.Close()
	a, b := mn.Hosts()[0], mn.Hosts()[1]
	type got struct {
		from peer.ID
		env  *pb.Envelope
	}
	atA, atB := make(chan got, 4), make(chan got, 4)
	ta := NewTransport(a, wire.Protocols, Handlers{Receive: func(from peer.ID, _ protocol.ID, env *pb.Envelope) { atA <- got{from, env} }}, TransportConfig{}, nil)
	defer ta.Close()
	tb := NewTransport(b, wire.Protocols, Handlers{Receive: func(from peer.ID, _ protocol.ID, env *pb.Envelope) { atB <- got{from, env} }}, TransportConfig{}, nil)
	defer tb.Close()
	ping := wire.TransportError(pb.Error_UNSPECIFIED, "ping")
	if err := ta.Send(b.ID(), wire.Sigma, ping); err != nil {
		t.Fatal(err)
	}
	g := <-atB
	if g.from != a.ID() || g.env.GetError().GetText() != "ping" {
		t.Fatalf("b got %v from %s", g.env, g.from)
	}
	// The answer reuses the stream a opened.
	if err := tb.Send(a.ID(), wire.Sigma, wire.TransportError(pb.Error_UNSPECIFIED, "pong")); err != nil {
		t.Fatal(err)
	}
	if g := <-atA; g.from != b.ID() || g.env.GetError().GetText() != "pong" {
		t.Fatalf("a got %v from %s", g.env, g.from)
	}
	sigmaStreams := 0 // other protocols (identify) may have streams open too
	for _, s := range a.Network().ConnsToPeer(b.ID())[0].GetStreams() {
		if s.Protocol() == wire.Sigma {
			sigmaStreams++
		}
	}
	if sigmaStreams != 1 {
		t.Fatalf("%d Sigma streams between the peers, want the one reused both ways", sigmaStreams)
	}
}

func TestUnreachablePeerIsReported(t *testing.T) {
	mn := mocknet.New()
	defer mn.Close()
	a, err := mn.GenPeer()
	if err != nil {
		t.Fatal(err)
	}
	b, err := mn.GenPeer() // never linked to a
	if err != nil {
		t.Fatal(err)
	}
	gone := make(chan peer.ID, 1)
	ta := NewTransport(a, wire.Protocols, Handlers{Receive: func(peer.ID, protocol.ID, *pb.Envelope) {},
		Unreachable: func(p peer.ID) { gone <- p }}, TransportConfig{DialTimeout: time.Second}, nil)
	defer ta.Close()
	_ = ta.Send(b.ID(), wire.Backoff, wire.TransportError(pb.Error_UNSPECIFIED, "x"))
	select {
	case p := <-gone:
		if p != b.ID() {
			t.Fatalf("reported %s", p)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the failed dial was not reported")
	}
}

func TestKeyFileKeepsTheIdentity(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "peer.key")
	listen := []string{"/ip4/127.0.0.1/tcp/0"}
	h1, err := NewHost(HostConfig{KeyFile: path, Listen: listen})
	if err != nil {
		t.Fatal(err)
	}
	id := h1.ID()
	h1.Close()
	h2, err := NewHost(HostConfig{KeyFile: path, Listen: listen})
	if err != nil {
		t.Fatal(err)
	}
	defer h2.Close()
	if h2.ID() != id {
		t.Fatalf("identity changed from %s to %s", id, h2.ID())
	}
	if err := os.WriteFile(path, []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := NewHost(HostConfig{KeyFile: path, Listen: listen}); err == nil {
		t.Fatal("a corrupt key file was accepted")
	}
	if _, err := ParsePeers([]string{"/ip4/1.2.3.4/tcp/1"}); err == nil {
		t.Fatal("an address without /p2p/ was accepted as a peer")
	}
}

func TestQUIC(t *testing.T) {
	quic := HostConfig{Listen: []string{"/ip4/127.0.0.1/udp/0/quic-v1"}}
	a, err := NewHost(quic)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := NewHost(quic)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	got := make(chan string, 1)
	tb := NewTransport(b, wire.Protocols, Handlers{Receive: func(_ peer.ID, _ protocol.ID, env *pb.Envelope) {
		got <- env.GetError().GetText()
	}}, TransportConfig{}, nil)
	defer tb.Close()
	a.Peerstore().AddAddrs(b.ID(), b.Addrs(), time.Minute)
	ta := NewTransport(a, wire.Protocols, Handlers{Receive: func(peer.ID, protocol.ID, *pb.Envelope) {}}, TransportConfig{}, nil)
	defer ta.Close()
	if err := ta.Send(b.ID(), wire.Ordering, wire.TransportError(pb.Error_UNSPECIFIED, "over quic")); err != nil {
		t.Fatal(err)
	}
	select {
	case text := <-got:
		if text != "over quic" {
			t.Fatalf("got %q", text)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("nothing arrived over QUIC")
	}
	if c := a.Network().ConnsToPeer(b.ID()); len(c) == 0 || c[0].RemoteMultiaddr().String() == "" ||
		!strings.Contains(c[0].RemoteMultiaddr().String(), "quic-v1") {
		t.Fatalf("connections: %v", c)
	}
}
