package logical

import (
	"context"
	"sync"
	"time"

	kb "github.com/libp2p/go-libp2p-kbucket"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/peerstore"
	"github.com/libp2p/go-libp2p/core/protocol"
	"github.com/multiformats/go-multiaddr"

	"github.com/dhtsync/dhtsync/p2p/wire"
	"github.com/dhtsync/dhtsync/p2p/wire/pb"
)

// resolver finds the current host of a replica key: a cache with expiry in
// front of DHT lookups, one lookup per key at a time, with the messages for
// the key waiting for it. Redirects and failed streams correct the cache.
type resolver struct {
	p *Peer

	mu      sync.Mutex
	cache   map[Key]cachedHost
	waiting map[Key][]waitingMessage // non-nil entry: a lookup is under way
}

// fallbackTTL is how long a host chosen from the local routing table alone,
// after a failed lookup, is trusted.
const fallbackTTL = time.Second

type cachedHost struct {
	peer  peer.ID
	until time.Time
}

type waitingMessage struct {
	proto protocol.ID
	env   *pb.Envelope
}

func newResolver(p *Peer) *resolver {
	return &resolver{p: p, cache: map[Key]cachedHost{}, waiting: map[Key][]waitingMessage{}}
}

// send sends env to the host of key, looking it up first if need be.
func (r *resolver) send(key Key, proto protocol.ID, env *pb.Envelope) {
	r.mu.Lock()
	if c, ok := r.cache[key]; ok && time.Now().Before(c.until) {
		r.mu.Unlock()
		r.p.sendTo(c.peer, proto, env)
		return
	}
	w, busy := r.waiting[key]
	if len(w) >= r.p.cfg.PendingPerKey {
		r.mu.Unlock()
		r.p.stats.dropped.Add(1)
		return
	}
	if r.p.ctx.Err() != nil {
		r.mu.Unlock()
		return // closing: no new lookups
	}
	r.waiting[key] = append(w, waitingMessage{proto, env})
	if !busy {
		r.p.wg.Add(1) // under r.mu: Peer.Close passes r.mu before it waits
		go r.lookup(key)
	}
	r.mu.Unlock()
}

// lookup asks the DHT for the peers closest to key, takes the closest one
// (this peer included) as host, and sends what waited for it.
func (r *resolver) lookup(key Key) {
	defer r.p.wg.Done()
	r.p.stats.lookups.Add(1)
	ctx, cancel := context.WithTimeout(r.p.ctx, r.p.cfg.LookupTimeout)
	closest, err := r.p.dht.GetClosestPeers(ctx, string(key[:]))
	cancel()
	ttl := r.p.cfg.CacheTTL
	if err != nil {
		// No answer from the network (an empty routing table: a peer alone,
		// or cut off): the best this peer knows is its own table. Trusted
		// briefly, so that a lookup is tried again soon.
		r.p.cfg.Log.Debug("lookup", "key", key, "err", err)
		closest, ttl = r.p.hosting.connectedPeers(), fallbackTTL
	}
	host := closestOf(key, append(closest, r.p.self))
	r.mu.Lock()
	waiting := r.waiting[key]
	delete(r.waiting, key)
	r.cache[key] = cachedHost{host, time.Now().Add(ttl)}
	r.mu.Unlock()
	for _, w := range waiting {
		r.p.sendTo(host, w.proto, w.env)
	}
}

// closestOf returns the peer of peers closest to key in the DHT's metric.
func closestOf(key Key, peers []peer.ID) peer.ID {
	return kb.SortClosestPeers(peers, kb.ConvertKey(string(key[:])))[0]
}

// redirected follows a redirect from peer from: it does not host the key, and
// names the peers it knows closer.
func (r *resolver) redirected(from peer.ID, m wire.Redirect) {
	var key Key
	if len(m.Key) != len(key) {
		return
	}
	copy(key[:], m.Key)
	var closer []peer.ID
	for _, info := range m.Closer {
		id, err := peer.IDFromBytes(info.Id)
		if err != nil || id == from {
			continue
		}
		for _, b := range info.Addrs {
			if a, err := multiaddr.NewMultiaddrBytes(b); err == nil {
				r.p.h.Peerstore().AddAddr(id, a, peerstore.TempAddrTTL)
			}
		}
		closer = append(closer, id)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.cache[key]; ok && c.peer != from {
		return // already corrected
	}
	if len(closer) == 0 {
		delete(r.cache, key)
		return
	}
	// The redirecting peer's view: trusted only until the next lookup would
	// be due anyway, and only if the peer it names is closer to the key.
	if best := closestOf(key, append(closer, from)); best != from {
		r.cache[key] = cachedHost{best, time.Now().Add(r.p.cfg.CacheTTL)}
	} else {
		delete(r.cache, key)
	}
}

// forget drops every cached host that is peer p (a stream to it failed).
func (r *resolver) forget(p peer.ID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, c := range r.cache {
		if c.peer == p {
			delete(r.cache, k)
		}
	}
}

// cached reports the cached host of key, for tests and status.
func (r *resolver) cached(key Key) (peer.ID, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.cache[key]
	return c.peer, ok && time.Now().Before(c.until)
}
