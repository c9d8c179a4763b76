package logical

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/ipfs/go-datastore"
	dssync "github.com/ipfs/go-datastore/sync"
	dht "github.com/libp2p/go-libp2p-kad-dht"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"

	"github.com/dhtsync/dhtsync/core"
	"github.com/dhtsync/dhtsync/p2p"
	"github.com/dhtsync/dhtsync/p2p/wire"
	"github.com/dhtsync/dhtsync/p2p/wire/pb"
)

// Peer is a dhtsync peer: it hosts the logical replicas whose keys are
// closest to it in the DHT, and runs clients (locks, objects) whose messages
// it routes to the current hosts of their replicas.
type Peer struct {
	cfg      Config
	h        host.Host
	dht      *dht.IpfsDHT
	self     peer.ID
	tr       *p2p.Transport
	services map[protocol.ID]*service
	resolver *resolver
	hosting  *hosting
	stats    stats

	mu         sync.Mutex
	clients    map[clientKey]*p2p.Runner
	nextClient uint64

	local  chan inbound // messages between this peer's own clients and replicas
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

type clientKey struct {
	service  string
	resource string
	id       core.ClientID
}

type inbound struct {
	proto protocol.ID
	env   *pb.Envelope
}

// New starts a peer on host h and its dhtsync DHT d.
func New(h host.Host, d *dht.IpfsDHT, cfg Config) (*Peer, error) {
	cfg = cfg.withDefaults()
	bo, err := backoffService(cfg.Backoff)
	if err != nil {
		return nil, fmt.Errorf("logical: backoff: %w", err)
	}
	sg, err := sigmaService(cfg.Sigma)
	if err != nil {
		return nil, fmt.Errorf("logical: sigma: %w", err)
	}
	ord, err := orderingService(cfg.Ordering, cfg.OrderingMutex)
	if err != nil {
		return nil, fmt.Errorf("logical: ordering: %w", err)
	}
	store := cfg.Store
	if store == nil {
		store = dssync.MutexWrap(datastore.NewMapDatastore())
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Peer{cfg: cfg, h: h, dht: d, self: h.ID(),
		services: map[protocol.ID]*service{bo.proto: bo, sg.proto: sg, ord.proto: ord},
		clients:  map[clientKey]*p2p.Runner{}, local: make(chan inbound, 4096), ctx: ctx, cancel: cancel}
	p.resolver = newResolver(p)
	p.hosting = newHosting(p, store)
	if err := p.hosting.load(); err != nil {
		cancel()
		return nil, err
	}
	p.tr = p2p.NewTransport(h, wire.Protocols, p2p.Handlers{Receive: p.receive, Unreachable: p.resolver.forget}, cfg.Transport, cfg.Log)
	p.wg.Add(2)
	go p.deliverLocal()
	go p.hosting.handOffLoop()
	return p, nil
}

// ID is the peer's identity.
func (p *Peer) ID() peer.ID { return p.self }

// Host is the peer's libp2p host.
func (p *Peer) Host() host.Host { return p.h }

// DHT is the peer's dhtsync DHT.
func (p *Peer) DHT() *dht.IpfsDHT { return p.dht }

// Close stops the peer's clients, replicas and streams. It does not close the
// host or the DHT, which the caller made.
func (p *Peer) Close() {
	p.cancel()
	p.tr.Close()
	p.mu.Lock()
	for _, r := range p.clients {
		r.Close()
	}
	p.mu.Unlock()
	p.hosting.close()
	p.resolver.mu.Lock() // a lookup started before the cancel has been counted
	p.resolver.mu.Unlock()
	p.wg.Wait()
}

// send routes a message of a core: to a client's peer, or to the current host
// of a replica key.
func (p *Peer) send(svc *service, resource string, from, to core.Addr, m core.Message) {
	env, err := wire.Encode(wire.Envelope{Resource: resource, From: from, To: to, Msg: m})
	if err != nil {
		p.cfg.Log.Error("encode", "err", err) // a core produced a message we cannot send: a bug
		return
	}
	if !to.IsReplica() {
		pid, err := clientPeer(to.Client)
		if err != nil {
			return
		}
		p.sendTo(pid, svc.proto, env)
		return
	}
	key, err := ReplicaKey(resource, to.Replica)
	if err != nil {
		return
	}
	p.resolver.send(key, svc.proto, env)
}

// sendTo sends env to peer pid, or hands it to this peer's own side.
func (p *Peer) sendTo(pid peer.ID, proto protocol.ID, env *pb.Envelope) {
	if pid == p.self {
		select {
		case p.local <- inbound{proto, env}:
		default:
			p.stats.dropped.Add(1)
		}
		return
	}
	if err := p.tr.Send(pid, proto, env); err != nil {
		p.stats.dropped.Add(1)
	}
}

func (p *Peer) deliverLocal() {
	defer p.wg.Done()
	for {
		select {
		case m := <-p.local:
			p.receive(p.self, m.proto, m.env)
		case <-p.ctx.Done():
			return
		}
	}
}

// receive handles an envelope from peer from.
func (p *Peer) receive(from peer.ID, proto protocol.ID, env *pb.Envelope) {
	svc := p.services[proto]
	e, err := wire.Decode(env)
	if err != nil {
		p.stats.malformed.Add(1)
		p.sendTo(from, proto, wire.TransportError(pb.Error_MALFORMED, err.Error()))
		return
	}
	switch m := e.Msg.(type) {
	case wire.Redirect:
		p.stats.redirected.Add(1)
		p.resolver.redirected(from, m)
		return
	case wire.Error:
		p.stats.remoteErrors.Add(1)
		p.cfg.Log.Debug("remote error", "peer", from, "protocol", proto, "err", m)
		return
	}
	if e.To.IsReplica() {
		p.hosting.deliver(from, svc, e)
		return
	}
	p.toClient(from, svc, e)
}

// toClient hands a replica's message to the local client it names.
func (p *Peer) toClient(from peer.ID, svc *service, e wire.Envelope) {
	if !e.From.IsReplica() || e.From.Replica >= svc.n {
		p.reject(from, svc, e, pb.Error_MALFORMED, "clients hear only from replicas")
		return
	}
	if !p.mayHost(from, e.Resource, e.From.Replica) {
		p.stats.spoofed.Add(1) // a peer speaking for a replica it does not host
		return
	}
	p.mu.Lock()
	r := p.clients[clientKey{svc.name, e.Resource, e.To.Client}]
	p.mu.Unlock()
	if r != nil {
		r.Receive(e.From, e.Msg)
	}
}

// mayHost reports whether peer from may speak for replica j of resource: it
// is this peer, the host this peer looked up for the key, or the closest to
// the key of the peers this peer is connected to. A peer can thus speak for no
// more replicas than the DHT places on it: one Byzantine peer cannot forge the
// answers of many replicas.
func (p *Peer) mayHost(from peer.ID, resource string, j int) bool {
	if from == p.self {
		return true
	}
	key, err := ReplicaKey(resource, j)
	if err != nil {
		return false
	}
	if host, ok := p.resolver.cached(key); ok && host == from {
		return true
	}
	return closestOf(key, append(p.hosting.connectedPeers(), from)) == from
}

// reject answers a message this peer will not serve with an Error.
func (p *Peer) reject(to peer.ID, svc *service, e wire.Envelope, code pb.Error_Code, text string) {
	p.stats.rejected.Add(1)
	reply, err := wire.Encode(wire.Envelope{Resource: e.Resource, From: e.To, To: e.From, Msg: wire.Error{Code: code, Text: text}})
	if err == nil {
		p.sendTo(to, svc.proto, reply)
	}
}

// clientPeer is the peer part of a client name "<peer id>/<local name>".
func clientPeer(c core.ClientID) (peer.ID, error) {
	id, _, ok := strings.Cut(string(c), "/")
	if !ok {
		return "", errors.New("logical: client name without a peer id")
	}
	return peer.Decode(id)
}

// ClientName is the name of a client of peer p: "<peer id>/<local name>".
// Replicas accept a client name only over a stream from that peer.
func ClientName(p peer.ID, local string) core.ClientID {
	return core.ClientID(p.String() + "/" + local)
}

// newClientID names a new local client "<peer id>/<kind>-<n>".
func (p *Peer) newClientID(kind string) core.ClientID {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.nextClient++
	return ClientName(p.self, fmt.Sprintf("%s-%d", kind, p.nextClient))
}

func (p *Peer) register(k clientKey, r *p2p.Runner) {
	p.mu.Lock()
	p.clients[k] = r
	p.mu.Unlock()
}

func (p *Peer) unregister(k clientKey) {
	p.mu.Lock()
	r := p.clients[k]
	delete(p.clients, k)
	p.mu.Unlock()
	if r != nil {
		r.Close()
	}
}
