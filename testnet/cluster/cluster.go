package cluster

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"time"

	dht "github.com/libp2p/go-libp2p-kad-dht"
	kb "github.com/libp2p/go-libp2p-kbucket"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	mocknet "github.com/libp2p/go-libp2p/p2p/net/mock"
	"github.com/multiformats/go-multiaddr"

	"github.com/dhtsync/dhtsync/logical"
	"github.com/dhtsync/dhtsync/p2p"
)

// Options configure a cluster.
type Options struct {
	Peers int
	// Latency is the one-way delay of every mock link (mock network only).
	Latency time.Duration
	// TCP runs the peers on loopback TCP instead of the mock network.
	TCP bool
	// DataDir, if set, gives each peer a key file and an on-disk store under
	// DataDir/<i>, so Restart resumes its replicas.
	DataDir string
	Config  logical.Config
}

// Cluster is a set of in-process peers.
type Cluster struct {
	opts Options
	mn   mocknet.Mocknet

	mu    sync.Mutex
	peers []*Member
}

// Member is one peer of a cluster; Peer is nil while it is down.
type Member struct {
	*logical.Peer
	Index int
	key   crypto.PrivKey
	addr  multiaddr.Multiaddr // mock network address
	host  host.Host
	dht   *dht.IpfsDHT
	store interface{ Close() error }
}

// New starts opts.Peers peers and connects them.
func New(ctx context.Context, opts Options) (*Cluster, error) {
	if opts.Peers < 1 {
		return nil, errors.New("cluster: need at least one peer")
	}
	c := &Cluster{opts: opts}
	if !opts.TCP {
		c.mn = mocknet.New()
		c.mn.SetLinkDefaults(mocknet.LinkOptions{Latency: opts.Latency})
	}
	for i := range opts.Peers {
		key, _, err := crypto.GenerateEd25519Key(rand.Reader)
		if err != nil {
			return nil, err
		}
		m := &Member{Index: i, key: key}
		if !opts.TCP {
			m.addr, _ = multiaddr.NewMultiaddr(fmt.Sprintf("/ip4/10.0.%d.%d/tcp/4001", i/250, i%250+1))
		}
		c.peers = append(c.peers, m)
	}
	for _, m := range c.peers {
		if err := c.start(ctx, m); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

// start brings member m up and connects it to the live peers.
func (c *Cluster) start(ctx context.Context, m *Member) error {
	h, err := c.newHost(m)
	if err != nil {
		return err
	}
	var bootstrap []peer.AddrInfo
	for _, o := range c.Live() {
		if o != m {
			bootstrap = append(bootstrap, peer.AddrInfo{ID: o.host.ID(), Addrs: o.host.Addrs()})
		}
	}
	if !c.opts.TCP {
		for _, o := range bootstrap {
			if _, err := c.mn.LinkPeers(h.ID(), o.ID); err != nil {
				return err
			}
		}
	}
	d, err := p2p.NewDHT(ctx, h, bootstrap)
	if err != nil {
		_ = h.Close()
		return err
	}
	cfg := c.opts.Config
	if c.opts.DataDir != "" {
		ds, err := logical.OpenStore(filepath.Join(c.opts.DataDir, fmt.Sprint(m.Index)))
		if err != nil {
			_ = d.Close()
			_ = h.Close()
			return err
		}
		cfg.Store, m.store = ds, ds
	}
	p, err := logical.New(h, d, cfg)
	if err != nil {
		_ = d.Close()
		_ = h.Close()
		return err
	}
	c.mu.Lock()
	m.Peer, m.host, m.dht = p, h, d
	c.mu.Unlock()
	return nil
}

func (c *Cluster) newHost(m *Member) (host.Host, error) {
	if c.opts.TCP {
		return p2p.NewHostWithKey(m.key, p2p.HostConfig{Listen: []string{"/ip4/127.0.0.1/tcp/0"}, Unlimited: true})
	}
	return c.mn.AddPeer(m.key, m.addr)
}

// Live are the members that are up.
func (c *Cluster) Live() []*Member {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*Member
	for _, m := range c.peers {
		if m.Peer != nil {
			out = append(out, m)
		}
	}
	return out
}

// Members are all members, up or down.
func (c *Cluster) Members() []*Member {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.peers)
}

// WaitReady waits until every live peer's routing table holds every other
// live peer (or as many as a Kademlia table keeps), so that hosting is settled.
// A peer whose liveness check failed (kad-dht gives a connecting peer one
// FIND_NODE query, 10 s, and drops it on failure, as under a loaded -race run)
// is re-learned by a routing-table refresh, which this asks for every second
// for the tables still short, instead of waiting for the DHT's own refresh
// (every 10 minutes).
func (c *Cluster) WaitReady(ctx context.Context) error {
	live := c.Live()
	want := min(len(live)-1, 20)
	refresh := time.NewTicker(time.Second)
	defer refresh.Stop()
	for {
		var short []*Member
		for _, m := range live {
			if m.dht.RoutingTable().Size() < want {
				short = append(short, m)
			}
		}
		if len(short) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster: routing tables did not fill: %w", ctx.Err())
		case <-refresh.C:
			for _, m := range short {
				m.dht.ForceRefresh() // asynchronous; its result channel is buffered
			}
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Kill stops member i abruptly: its links go down and its host closes, as
// when a machine disappears. Its data directory stays.
func (c *Cluster) Kill(i int) {
	c.mu.Lock()
	m := c.peers[i]
	p, h, d, store := m.Peer, m.host, m.dht, m.store
	m.Peer, m.host, m.dht, m.store = nil, nil, nil, nil
	c.mu.Unlock()
	if p == nil {
		return
	}
	if !c.opts.TCP {
		for _, o := range c.mn.Peers() {
			if o != h.ID() {
				_ = c.mn.UnlinkPeers(h.ID(), o)
			}
		}
	}
	_ = h.Close()
	p.Close()
	_ = d.Close()
	if store != nil {
		_ = store.Close()
	}
}

// Restart brings member i back with its identity (and data directory).
func (c *Cluster) Restart(ctx context.Context, i int) error {
	return c.start(ctx, c.Members()[i])
}

// Add starts a new member with a fresh identity, or with the given key.
func (c *Cluster) Add(ctx context.Context, key crypto.PrivKey) (*Member, error) {
	if key == nil {
		var err error
		if key, _, err = crypto.GenerateEd25519Key(rand.Reader); err != nil {
			return nil, err
		}
	}
	c.mu.Lock()
	m := &Member{Index: len(c.peers), key: key}
	if !c.opts.TCP {
		m.addr, _ = multiaddr.NewMultiaddr(fmt.Sprintf("/ip4/10.0.%d.%d/tcp/4001", m.Index/250, m.Index%250+1))
	}
	c.peers = append(c.peers, m)
	c.mu.Unlock()
	return m, c.start(ctx, m)
}

// HostOf is the live member closest to key: the one that ought to host it.
func (c *Cluster) HostOf(key logical.Key) *Member {
	live := c.Live()
	ids := make([]peer.ID, len(live))
	for i, m := range live {
		ids[i] = m.host.ID()
	}
	best := kb.SortClosestPeers(ids, kb.ConvertKey(string(key[:])))[0]
	for _, m := range live {
		if m.host.ID() == best {
			return m
		}
	}
	return nil
}

// KeyCloserThan returns a fresh identity whose peer is closer to key than
// every live member: a peer that, joining, takes the key over.
func (c *Cluster) KeyCloserThan(key logical.Key) (crypto.PrivKey, error) {
	current := c.HostOf(key).host.ID()
	for range 1 << 16 {
		k, _, err := crypto.GenerateEd25519Key(rand.Reader)
		if err != nil {
			return nil, err
		}
		id, _ := peer.IDFromPrivateKey(k)
		if kb.SortClosestPeers([]peer.ID{current, id}, kb.ConvertKey(string(key[:])))[0] == id {
			return k, nil
		}
	}
	return nil, errors.New("cluster: no closer identity found")
}

// Close stops every peer.
func (c *Cluster) Close() {
	for _, m := range c.Members() {
		c.Kill(m.Index)
	}
	if c.mn != nil {
		_ = c.mn.Close()
	}
}
