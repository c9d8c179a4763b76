package p2p

import (
	"context"
	"time"

	dht "github.com/libp2p/go-libp2p-kad-dht"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	drouting "github.com/libp2p/go-libp2p/p2p/discovery/routing"
	dutil "github.com/libp2p/go-libp2p/p2p/discovery/util"
)

// Rendezvous is the default string under which dhtsync peers advertise
// themselves on the public network.
const Rendezvous = "dhtsync/v1"

// DiscoveryConfig configures [Discover].
type DiscoveryConfig struct {
	// Rendezvous names the dhtsync network (Rendezvous if empty).
	Rendezvous string
	// Bootstrap are peers of the public DHT (the libp2p defaults if empty).
	Bootstrap []peer.AddrInfo
	// Private keeps peers with private addresses (for tests on loopback);
	// on the public network only public addresses are used.
	Private bool
	// Every is how often to look for peers again (1 minute).
	Every time.Duration
}

// Discover finds other dhtsync peers through the public libp2p network: it
// joins the public Kademlia DHT (default /ipfs prefix) as a client, only to
// advertise the rendezvous string and to find the peers advertising it, and
// connects to them. Connected peers that speak /dhtsync/kad enter dhtsync's
// own DHT through identify; the public DHT carries no dhtsync data. It runs
// until ctx ends.
func Discover(ctx context.Context, h host.Host, cfg DiscoveryConfig) error {
	if cfg.Rendezvous == "" {
		cfg.Rendezvous = Rendezvous
	}
	if len(cfg.Bootstrap) == 0 {
		cfg.Bootstrap = dht.GetDefaultBootstrapPeerAddrInfos()
	}
	if cfg.Every <= 0 {
		cfg.Every = time.Minute
	}
	opts := []dht.Option{dht.Mode(dht.ModeClient), dht.BootstrapPeers(cfg.Bootstrap...)}
	if !cfg.Private {
		opts = append(opts, dht.QueryFilter(dht.PublicQueryFilter), dht.RoutingTableFilter(dht.PublicRoutingTableFilter))
	}
	public, err := dht.New(ctx, h, opts...)
	if err != nil {
		return err
	}
	for _, p := range cfg.Bootstrap {
		_ = h.Connect(ctx, p) // the DHT keeps trying the ones that fail
	}
	if err := public.Bootstrap(ctx); err != nil {
		_ = public.Close()
		return err
	}
	go func() {
		defer public.Close()
		// An advertisement that fails for want of peers is retried only
		// after minutes: wait until the public routing table has some.
		for public.RoutingTable().Size() == 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
		disc := drouting.NewRoutingDiscovery(public)
		dutil.Advertise(ctx, disc, cfg.Rendezvous)
		t := time.NewTicker(cfg.Every)
		defer t.Stop()
		for {
			if found, err := dutil.FindPeers(ctx, disc, cfg.Rendezvous); err == nil {
				for _, p := range found {
					if p.ID != h.ID() && len(p.Addrs) > 0 {
						_ = h.Connect(ctx, p)
					}
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return nil
}
