package logical

import (
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/dhtsync/dhtsync/p2p/wire"
	"github.com/dhtsync/dhtsync/p2p/wire/pb"
)

func TestImpossibleDeploymentsAreRefused(t *testing.T) {
	cases := map[string]func(*Config){
		"backoff n < 5b+1":      func(c *Config) { c.Backoff.N = 5 },
		"sigma m ≤ n/2":         func(c *Config) { c.Sigma.M = 4 },
		"ordering n < 6b+1":     func(c *Config) { c.Ordering.N, c.OrderingMutex.N = 6, 6 },
		"ordering mutex of 6":   func(c *Config) { c.OrderingMutex.N = 6 },
		"lease within 2δ":       func(c *Config) { c.Backoff.Lease = 10 * time.Millisecond },
		"ordering with no type": func(c *Config) { c.Ordering.Object = nil },
	}
	for name, change := range cases {
		cfg := DefaultConfig(50 * time.Millisecond)
		change(&cfg)
		// The deployment is checked before the host is touched.
		if _, err := New(nil, nil, cfg); err == nil {
			t.Errorf("%s: accepted", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}

func TestClientNamesCarryTheirPeer(t *testing.T) {
	key, _, _ := crypto.GenerateEd25519Key(nil)
	id, _ := peer.IDFromPrivateKey(key)
	if got, err := clientPeer("x"); err == nil {
		t.Fatalf("a name without a peer id gave %s", got)
	}
	if got, err := clientPeer(ClientName(id, "lock-1")); err != nil || got != id {
		t.Fatalf("got %s, %v", got, err)
	}
	if _, err := clientPeer("not-a-peer/lock-1"); err == nil {
		t.Fatal("a bad peer id was accepted")
	}
}

func TestRedirectsCorrectTheCacheOnlyTowardsTheKey(t *testing.T) {
	var ids []peer.ID
	for range 8 {
		key, _, _ := crypto.GenerateEd25519Key(nil)
		id, _ := peer.IDFromPrivateKey(key)
		ids = append(ids, id)
	}
	key, _ := ReplicaKey("r", 0)
	best := closestOf(key, ids)
	var worst peer.ID
	for _, id := range ids {
		if closestOf(key, []peer.ID{id, best}) == best && id != best {
			worst = id
		}
	}
	r := &resolver{p: &Peer{cfg: DefaultConfig(time.Second).withDefaults()}, cache: map[Key]cachedHost{}}
	r.cache[key] = cachedHost{worst, time.Now().Add(time.Minute)}
	r.redirected(worst, redirectTo(key, best))
	if got, _ := r.cached(key); got != best {
		t.Fatalf("cache names %s after a redirect to the closer %s", got, best)
	}
	// A redirect from the cached host naming a farther peer is not followed.
	r.redirected(best, redirectTo(key, worst))
	if _, ok := r.cached(key); ok {
		t.Fatal("a redirect away from the key was followed")
	}
}

func redirectTo(key Key, to peer.ID) wire.Redirect {
	return wire.Redirect{Key: key[:], Closer: []*pb.PeerInfo{{Id: []byte(to)}}}
}
