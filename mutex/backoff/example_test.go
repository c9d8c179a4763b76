package backoff_test

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/dhtsync/dhtsync/core"
	"github.com/dhtsync/dhtsync/mutex/backoff"
)

// Drive one client and six servers by hand: the runtime's job, done here with a
// core.Recorder and an instant network.
func Example() {
	cfg := backoff.Config{N: 6, B: 1, Lease: 100 * time.Millisecond, MaxDelay: 10 * time.Millisecond}
	servers := make([]*backoff.Server, cfg.N)
	for i := range servers {
		servers[i], _ = backoff.NewServer(cfg, 0)
	}
	client, _ := backoff.NewClient(cfg, "alice", rand.New(rand.NewPCG(1, 1)))

	var toServers, toClient core.Recorder
	_ = client.Acquire(0, 0, &toServers) // contend() for the default lease
	now := core.Time(5 * time.Millisecond)
	for _, m := range toServers.Sent {
		servers[m.To.Replica].Receive(now, core.ClientAddr("alice"), m.Msg, &toClient)
	}
	for i, m := range toClient.Sent {
		client.Receive(2*now, core.ReplicaAddr(i), m.Msg, &toServers)
	}
	fmt.Printf("%+v\n", toServers.Events[0])
	// Output: {Until:100ms Rounds:1 Voters:[0 1 2 3 4]}
}
