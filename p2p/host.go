package p2p

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/libp2p/go-libp2p"
	dht "github.com/libp2p/go-libp2p-kad-dht"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	rcmgr "github.com/libp2p/go-libp2p/p2p/host/resource-manager"
	"github.com/multiformats/go-multiaddr"

	"github.com/dhtsync/dhtsync/p2p/wire"
)

// DHTPrefix is the protocol prefix of dhtsync's own DHT: only peers that speak
// /dhtsync/kad/1.0.0 enter its routing table, so replica keys land on dhtsync
// peers only.
const DHTPrefix = "/dhtsync"

// DefaultListen listens on every interface on a random port, TCP and QUIC.
var DefaultListen = []string{"/ip4/0.0.0.0/tcp/0", "/ip4/0.0.0.0/udp/0/quic-v1"}

// HostConfig configures [NewHost].
type HostConfig struct {
	// KeyFile holds the peer's Ed25519 identity. It is created on first use;
	// empty means a new identity every start.
	KeyFile string
	// Listen are the multiaddrs to listen on (DefaultListen if empty).
	Listen []string
	// Unlimited lifts the resource manager's limits (for local testnets of
	// many peers on one address); otherwise the defaults scaled to the machine
	// apply, with explicit limits for dhtsync's protocols.
	Unlimited bool
}

// NewHost builds a libp2p host from cfg.
func NewHost(cfg HostConfig) (host.Host, error) {
	key, err := loadOrCreateKey(cfg.KeyFile)
	if err != nil {
		return nil, err
	}
	return NewHostWithKey(key, cfg)
}

// NewHostWithKey builds a libp2p host with identity key; cfg.KeyFile is ignored.
func NewHostWithKey(key crypto.PrivKey, cfg HostConfig) (host.Host, error) {
	listen := cfg.Listen
	if len(listen) == 0 {
		listen = DefaultListen
	}
	rm, err := resourceManager(cfg.Unlimited)
	if err != nil {
		return nil, err
	}
	return libp2p.New(libp2p.Identity(key), libp2p.ListenAddrStrings(listen...), libp2p.ResourceManager(rm))
}

// loadOrCreateKey reads an Ed25519 private key from path, or creates one there.
func loadOrCreateKey(path string) (crypto.PrivKey, error) {
	if path == "" {
		key, _, err := crypto.GenerateEd25519Key(nil)
		return key, err
	}
	if b, err := os.ReadFile(path); err == nil {
		key, err := crypto.UnmarshalPrivateKey(b)
		if err != nil {
			return nil, fmt.Errorf("p2p: key file %s: %w", path, err)
		}
		return key, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("p2p: key file: %w", err)
	}
	key, _, err := crypto.GenerateEd25519Key(nil)
	if err != nil {
		return nil, err
	}
	b, err := crypto.MarshalPrivateKey(key)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("p2p: key file: %w", err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return nil, fmt.Errorf("p2p: key file: %w", err)
	}
	return key, nil
}

// resourceManager gives dhtsync's protocols explicit stream and memory limits:
// a peer needs one stream per protocol to another peer (two when both open at
// once), so a few per peer are plenty and a flood of streams is refused.
func resourceManager(unlimited bool) (network.ResourceManager, error) {
	if unlimited {
		return rcmgr.NewResourceManager(rcmgr.NewFixedLimiter(rcmgr.InfiniteLimits))
	}
	limits := rcmgr.DefaultLimits
	libp2p.SetDefaultServiceLimits(&limits)
	for _, id := range wire.Protocols {
		limits.AddProtocolLimit(id,
			rcmgr.BaseLimit{Streams: 2048, StreamsInbound: 1024, StreamsOutbound: 1024, Memory: 64 << 20},
			rcmgr.BaseLimitIncrease{Streams: 1024, StreamsInbound: 512, StreamsOutbound: 512, Memory: 32 << 20})
		limits.AddProtocolPeerLimit(id,
			rcmgr.BaseLimit{Streams: 8, StreamsInbound: 4, StreamsOutbound: 4, Memory: 2 * wire.MaxMessage},
			rcmgr.BaseLimitIncrease{})
	}
	return rcmgr.NewResourceManager(rcmgr.NewFixedLimiter(limits.AutoScale()))
}

// NewDHT starts dhtsync's own Kademlia DHT on h in server mode (required: in
// auto mode routing tables stay empty on private networks) and connects to the
// bootstrap peers. Values and provider records are off: the DHT only places
// keys on peers.
func NewDHT(ctx context.Context, h host.Host, bootstrap []peer.AddrInfo) (*dht.IpfsDHT, error) {
	d, err := dht.New(ctx, h, dht.ProtocolPrefix(DHTPrefix), dht.Mode(dht.ModeServer),
		dht.BootstrapPeers(bootstrap...), dht.DisableProviders(), dht.DisableValues())
	if err != nil {
		return nil, err
	}
	for _, p := range bootstrap {
		// Errors are fine here: the DHT keeps trying its bootstrap peers.
		_ = h.Connect(ctx, p)
	}
	return d, nil
}

// ParsePeers parses multiaddrs that end in /p2p/<id>.
func ParsePeers(addrs []string) ([]peer.AddrInfo, error) {
	var out []peer.AddrInfo
	for _, s := range addrs {
		ma, err := multiaddr.NewMultiaddr(s)
		if err != nil {
			return nil, fmt.Errorf("p2p: peer address %q: %w", s, err)
		}
		info, err := peer.AddrInfoFromP2pAddr(ma)
		if err != nil {
			return nil, fmt.Errorf("p2p: peer address %q: %w", s, err)
		}
		out = append(out, *info)
	}
	return out, nil
}
