package p2p

import (
	"context"
	"testing"
	"time"

	dht "github.com/libp2p/go-libp2p-kad-dht"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
)

// A stand-in for the public network on loopback: one server of the default
// DHT. Two dhtsync peers that know only it find each other through the
// rendezvous and fill each other's dhtsync routing tables.
func TestDiscoveryThroughAPublicDHT(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	loopback := HostConfig{Listen: []string{"/ip4/127.0.0.1/tcp/0"}}
	newHost := func() host.Host {
		h, err := NewHost(loopback)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.Close() })
		return h
	}
	public := newHost()
	publicDHT, err := dht.New(ctx, public, dht.Mode(dht.ModeServer))
	if err != nil {
		t.Fatal(err)
	}
	defer publicDHT.Close()
	bootstrap := []peer.AddrInfo{{ID: public.ID(), Addrs: public.Addrs()}}

	var dhts []*dht.IpfsDHT
	for range 2 {
		h := newHost()
		d, err := NewDHT(ctx, h, nil) // no dhtsync bootstrap peer: only discovery can help
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		if err := Discover(ctx, h, DiscoveryConfig{Rendezvous: "dhtsync-test", Bootstrap: bootstrap, Private: true,
			Every: 200 * time.Millisecond}); err != nil {
			t.Fatal(err)
		}
		dhts = append(dhts, d)
	}
	for dhts[0].RoutingTable().Size() == 0 || dhts[1].RoutingTable().Size() == 0 {
		select {
		case <-ctx.Done():
			t.Fatalf("the dhtsync routing tables stayed empty: %d, %d", dhts[0].RoutingTable().Size(), dhts[1].RoutingTable().Size())
		case <-time.After(50 * time.Millisecond):
		}
	}
	// The public server is not a dhtsync peer: it must not enter the tables.
	for _, d := range dhts {
		if d.RoutingTable().Find(public.ID()) != "" {
			t.Fatal("the public DHT server entered dhtsync's routing table")
		}
	}
}
