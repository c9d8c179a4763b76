package logical

import (
	"cmp"
	"context"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ipfs/go-datastore"
	"github.com/ipfs/go-datastore/query"
	kb "github.com/libp2p/go-libp2p-kbucket"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"google.golang.org/protobuf/proto"

	"github.com/dhtsync/dhtsync/core"
	"github.com/dhtsync/dhtsync/p2p"
	"github.com/dhtsync/dhtsync/p2p/wire"
	"github.com/dhtsync/dhtsync/p2p/wire/pb"
)

// hosting is the replica side of a peer: it serves a replica key only while
// no peer it is connected to is closer to the key, keeps each replica's state
// in the datastore after every step, starts a new incarnation (a reset, with
// the grace period) for a key it begins to host without a state, and hands a
// replica to a closer peer when one appears.
type hosting struct {
	p     *Peer
	store datastore.Batching

	mu       sync.Mutex
	replicas map[replicaID]*replica
	closed   bool
}

type replicaID struct {
	service  string
	resource string
	index    int
}

// How a replica began its time on this peer.
const (
	OriginNew      = "new"      // a new incarnation: nothing carried over (a reset)
	OriginHandOff  = "hand-off" // state received from the previous host
	OriginRestored = "restored" // state read back from this peer's store
)

type replica struct {
	id          replicaID
	svc         *service
	key         Key
	incarnation uint64
	origin      string
	since       time.Time
	node        core.Node
	runner      *p2p.Runner
}

func newHosting(p *Peer, store datastore.Batching) *hosting {
	return &hosting{p: p, store: store, replicas: map[replicaID]*replica{}}
}

// ReplicaInfo describes a replica a peer hosts.
type ReplicaInfo struct {
	Service     string
	Resource    string
	Index       int
	Incarnation uint64
	Origin      string // OriginNew, OriginHandOff or OriginRestored
	Since       time.Time
}

// Replicas lists the replicas the peer hosts, sorted.
func (p *Peer) Replicas() []ReplicaInfo {
	h := p.hosting
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]ReplicaInfo, 0, len(h.replicas))
	for _, r := range h.replicas {
		out = append(out, ReplicaInfo{r.id.service, r.id.resource, r.id.index, r.incarnation, r.origin, r.since})
	}
	slices.SortFunc(out, func(a, b ReplicaInfo) int {
		return cmp.Or(strings.Compare(a.Service, b.Service), strings.Compare(a.Resource, b.Resource), cmp.Compare(a.Index, b.Index))
	})
	return out
}

func storeKey(svc string, key Key) datastore.Key {
	return datastore.NewKey("/replica/" + svc + "/" + hex.EncodeToString(key[:]))
}

// deliver serves a message for one of svc's replicas.
func (h *hosting) deliver(from peer.ID, svc *service, e wire.Envelope) {
	p := h.p
	i := e.To.Replica
	if i >= svc.n {
		p.reject(from, svc, e, pb.Error_MALFORMED, fmt.Sprintf("replica %d of a service with %d", i, svc.n))
		return
	}
	key, err := ReplicaKey(e.Resource, i)
	if err != nil {
		p.reject(from, svc, e, pb.Error_MALFORMED, err.Error())
		return
	}
	if code, text := h.authenticate(from, svc, e); code != pb.Error_UNSPECIFIED {
		p.reject(from, svc, e, code, text)
		return
	}
	id := replicaID{svc.name, e.Resource, i}
	if m, ok := e.Msg.(wire.HandOff); ok {
		h.receiveHandOff(svc, id, key, m)
		return
	}
	if closer := h.closerPeers(key); len(closer) > 0 {
		h.redirect(from, svc, e, key, closer)
		return
	}
	r, err := h.replica(svc, id, key)
	if err != nil {
		p.reject(from, svc, e, pb.Error_UNAVAILABLE, err.Error())
		return
	}
	r.runner.Receive(e.From, e.Msg)
}

// authenticate checks the sender's address against the stream's peer: a
// client must be one of the peer's own, and a replica must be hosted there as
// far as this peer knows. A peer can thus speak for no more replicas than the
// DHT places on it, and cannot inject a forged hand-off for a key it is not
// next to.
func (h *hosting) authenticate(from peer.ID, svc *service, e wire.Envelope) (pb.Error_Code, string) {
	if !e.From.IsReplica() {
		if pid, err := clientPeer(e.From.Client); err != nil || pid != from {
			return pb.Error_UNAUTHENTICATED, fmt.Sprintf("client %q is not a client of %s", e.From.Client, from)
		}
		return pb.Error_UNSPECIFIED, ""
	}
	if e.From.Replica >= svc.n {
		return pb.Error_MALFORMED, fmt.Sprintf("replica %d of a service with %d", e.From.Replica, svc.n)
	}
	// The sender speaks for replica j (or hands it over: a hand-off comes
	// from the previous host, the closest peer to the key but this one).
	if !h.p.mayHost(from, e.Resource, e.From.Replica) {
		return pb.Error_UNAUTHENTICATED, fmt.Sprintf("%s does not host replica %d of %q", from, e.From.Replica, e.Resource)
	}
	return pb.Error_UNSPECIFIED, ""
}

// connectedPeers are the routing table's peers this peer is connected to: the
// candidates for hosting a key. A peer in the table but not connected is most
// likely gone; redirecting to it would send clients nowhere.
func (h *hosting) connectedPeers() []peer.ID {
	var out []peer.ID
	for _, id := range h.p.dht.RoutingTable().ListPeers() {
		if h.p.h.Network().Connectedness(id) == network.Connected {
			out = append(out, id)
		}
	}
	return out
}

// closerPeers are the connected peers closer to key than this one, closest
// first (at most three).
func (h *hosting) closerPeers(key Key) []peer.ID {
	sorted := kb.SortClosestPeers(append(h.connectedPeers(), h.p.self), kb.ConvertKey(string(key[:])))
	i := slices.Index(sorted, h.p.self)
	return sorted[:min(i, 3)]
}

func (h *hosting) redirect(to peer.ID, svc *service, e wire.Envelope, key Key, closer []peer.ID) {
	p := h.p
	p.stats.redirects.Add(1)
	m := wire.Redirect{Key: key[:]}
	for _, id := range closer {
		info := &pb.PeerInfo{Id: []byte(id)}
		for _, a := range p.h.Peerstore().Addrs(id) {
			info.Addrs = append(info.Addrs, a.Bytes())
		}
		m.Closer = append(m.Closer, info)
	}
	reply, err := wire.Encode(wire.Envelope{Resource: e.Resource, From: e.To, To: e.From, Msg: m})
	if err == nil {
		p.sendTo(to, svc.proto, reply)
	}
}

// replica returns the hosted replica id, starting it if need be: from the
// store if this peer hosted it before, else as a new incarnation.
func (h *hosting) replica(svc *service, id replicaID, key Key) (*replica, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, fmt.Errorf("logical: peer closing")
	}
	if r := h.replicas[id]; r != nil {
		return r, nil
	}
	now := p2p.Now()
	incarnation := uint64(now) // unique and increasing across hosts with loosely synchronized clocks
	node, err := svc.newReplica(now, incarnation)
	if err != nil {
		return nil, err
	}
	h.p.stats.incarnations.Add(1)
	return h.start(svc, id, key, incarnation, OriginNew, node), nil
}

// start runs a replica; h.mu is held.
func (h *hosting) start(svc *service, id replicaID, key Key, incarnation uint64, origin string, node core.Node) *replica {
	r := &replica{id: id, svc: svc, key: key, incarnation: incarnation, origin: origin, since: time.Now(), node: node}
	r.runner = p2p.NewRunner(node, p2p.Outputs{
		Send: func(to core.Addr, m core.Message) {
			h.p.send(svc, id.resource, core.ReplicaAddr(id.index), to, m)
		},
		Emit:      func(core.Event) {},
		AfterStep: func() { h.persist(r) },
	})
	h.replicas[id] = r
	return r
}

// persist writes r's state to the store. It runs after each step, before the
// step's messages leave, so that nothing this replica said is forgotten by a
// restart from the store.
func (h *hosting) persist(r *replica) {
	st, ok := r.svc.state(r.node)
	if !ok {
		return
	}
	b, err := proto.Marshal(wire.EncodeState(p2p.Now(), wire.StateID{Resource: r.id.resource, Index: r.id.index,
		Incarnation: r.incarnation}, st))
	if err == nil {
		err = h.store.Put(context.Background(), storeKey(r.svc.name, r.key), b)
	}
	if err != nil {
		h.p.cfg.Log.Error("store replica", "service", r.svc.name, "resource", r.id.resource, "index", r.id.index, "err", err)
	}
}

// load restarts the replicas kept in the store (a restart with the same data
// directory): they continue in their incarnations.
func (h *hosting) load() error {
	res, err := h.store.Query(context.Background(), query.Query{Prefix: "/replica/"})
	if err != nil {
		return fmt.Errorf("logical: reading the store: %w", err)
	}
	defer res.Close()
	for e := range res.Next() {
		if e.Error != nil {
			return fmt.Errorf("logical: reading the store: %w", e.Error)
		}
		svc := h.serviceNamed(datastore.NewKey(e.Key).Parent().Name())
		st := &pb.State{}
		if svc == nil || proto.Unmarshal(e.Value, st) != nil {
			h.p.cfg.Log.Warn("skipping an unreadable stored replica", "key", e.Key)
			continue
		}
		// The stored times are on this peer's clock: place them at their base.
		sid, state, err := wire.DecodeState(st, core.Time(st.Base))
		if err != nil || sid.Index >= svc.n {
			h.p.cfg.Log.Warn("skipping an unreadable stored replica", "key", e.Key, "err", err)
			continue
		}
		if err := h.install(svc, sid, state, OriginRestored); err != nil {
			return err
		}
	}
	return nil
}

func (h *hosting) serviceNamed(name string) *service {
	for _, s := range h.p.services {
		if s.name == name {
			return s
		}
	}
	return nil
}

// install continues a replica from a carried state. It replaces a local
// replica of the same key only if the carried state is newer: a later
// incarnation (the local one was restored from storage while another peer
// hosted the key), or the local one is a new incarnation still in its grace
// period (it has granted nothing, so the carried state is the truth).
func (h *hosting) install(svc *service, sid wire.StateID, state any, origin string) error {
	key, err := ReplicaKey(sid.Resource, sid.Index)
	if err != nil {
		return err
	}
	id := replicaID{svc.name, sid.Resource, sid.Index}
	h.mu.Lock()
	defer h.mu.Unlock()
	if old := h.replicas[id]; old != nil {
		inGrace := old.origin == OriginNew && time.Since(old.since) <= svc.grace
		if sid.Incarnation <= old.incarnation && !inGrace {
			return nil
		}
		old.runner.Close()
	}
	node, err := svc.restore(state, origin == OriginRestored, p2p.Now())
	if err != nil {
		return err
	}
	h.start(svc, id, key, sid.Incarnation, origin, node)
	return nil
}

func (h *hosting) receiveHandOff(svc *service, id replicaID, key Key, m wire.HandOff) {
	sid, state, err := wire.DecodeState(m.State, p2p.Now())
	if err != nil || sid.Resource != id.resource || sid.Index != id.index {
		h.p.stats.malformed.Add(1)
		return
	}
	if err := h.install(svc, sid, state, OriginHandOff); err != nil {
		h.p.cfg.Log.Warn("hand-off", "resource", id.resource, "index", id.index, "err", err)
		return
	}
	h.p.stats.received.Add(1)
}

// handOffLoop periodically hands replicas to closer peers.
func (h *hosting) handOffLoop() {
	defer h.p.wg.Done()
	t := time.NewTicker(h.p.cfg.HandOffEvery)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			h.handOff()
		case <-h.p.ctx.Done():
			return
		}
	}
}

// handOff moves every replica for whose key a connected peer is closer to the
// closest such peer. The replica stops here first, so two peers never serve it
// from the same state at once; if the transfer is lost the new host starts a
// new incarnation, which the protocols survive as a reset.
func (h *hosting) handOff() {
	h.mu.Lock()
	var moving []*replica
	var targets []peer.ID
	for _, r := range h.replicas {
		if closer := h.closerPeers(r.key); len(closer) > 0 {
			moving, targets = append(moving, r), append(targets, closer[0])
			delete(h.replicas, r.id)
		}
	}
	h.mu.Unlock()
	for i, r := range moving {
		var st *pb.State
		r.runner.Do(func(now core.Time, _ core.Sink) {
			if state, ok := r.svc.state(r.node); ok {
				st = wire.EncodeState(now, wire.StateID{Resource: r.id.resource, Index: r.id.index, Incarnation: r.incarnation}, state)
			}
		})
		r.runner.Close()
		if err := h.store.Delete(context.Background(), storeKey(r.svc.name, r.key)); err != nil {
			h.p.cfg.Log.Warn("forget handed-off replica", "err", err)
		}
		if st == nil {
			continue // recovering: nothing worth carrying; the new host recovers
		}
		env, err := wire.Encode(wire.Envelope{Resource: r.id.resource, From: core.ReplicaAddr(r.id.index),
			To: core.ReplicaAddr(r.id.index), Msg: wire.HandOff{State: st}})
		if err == nil {
			h.p.stats.handOffs.Add(1)
			h.p.sendTo(targets[i], r.svc.proto, env)
		}
	}
}

func (h *hosting) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for _, r := range h.replicas {
		r.runner.Close()
	}
}
