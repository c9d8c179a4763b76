package logical_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/dhtsync/dhtsync/logical"
	"github.com/dhtsync/dhtsync/ordering"
	"github.com/dhtsync/dhtsync/p2p"
)

// A peer alone on loopback hosts every replica itself; with bootstrap peers
// the replicas spread over the network. The first acquire of a resource waits
// out the grace period of the new replicas.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h, err := p2p.NewHost(p2p.HostConfig{Listen: []string{"/ip4/127.0.0.1/tcp/0"}})
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()
	d, err := p2p.NewDHT(ctx, h, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer d.Close()
	peer, err := logical.New(h, d, logical.DefaultConfig(50*time.Millisecond))
	if err != nil {
		log.Fatal(err)
	}
	defer peer.Close()

	lease, err := peer.Lock(ctx, logical.Sigma, "printer")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("holding the lock for at most", time.Until(lease.Until()).Round(time.Second))
	lease.Unlock()

	counter, err := peer.Object("visits")
	if err != nil {
		log.Fatal(err)
	}
	defer counter.Close()
	res, err := counter.Submit(ctx, ordering.CounterAdd(5))
	if err != nil {
		log.Fatal(err)
	}
	v, _ := ordering.DecodeCounterResult(res)
	fmt.Println("counter:", v)
	// Output:
	// holding the lock for at most 1s
	// counter: 5
}
