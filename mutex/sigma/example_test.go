package sigma_test

import (
	"fmt"
	"time"

	"github.com/dhtsync/dhtsync/core"
	"github.com/dhtsync/dhtsync/mutex/sigma"
)

// One client and five replicas, driven by hand with an instant network: the
// client wins with m = 4 votes and holds the lock while n-m+1 = 2 votes last.
func Example() {
	cfg := sigma.Config{N: 5, M: 4, Lease: time.Second, MaxDelay: 10 * time.Millisecond}
	replicas := make([]*sigma.Replica, cfg.N)
	for i := range replicas {
		replicas[i], _ = sigma.NewReplica(cfg, uint64(i+1), 0)
	}
	client, _ := sigma.NewClient(cfg, "alice")

	var toReplicas core.Recorder
	_ = client.Acquire(0, 0, &toReplicas)
	for _, m := range toReplicas.Sent {
		var toClient core.Recorder
		replicas[m.To.Replica].Receive(0, core.ClientAddr("alice"), m.Msg, &toClient)
		var events core.Recorder
		client.Receive(0, m.To, toClient.Sent[0].Msg, &events)
		for _, e := range events.Events {
			fmt.Printf("%+v\n", e)
		}
	}
	// Output: {Until:1s Rounds:1 Voters:[0 1 2 3]}
}
