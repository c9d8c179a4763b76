package strawman

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/dhtsync/dhtsync/core"
	"github.com/dhtsync/dhtsync/mutex"
)

const lease = time.Second

func cfg() Config { return Config{N: 5, M: 3, Lease: lease, MaxDelay: 10 * time.Millisecond} }

func vote(r *Replica, now core.Time, c core.ClientID, round uint64) Vote {
	var rec core.Recorder
	r.Receive(now, core.ClientAddr(c), Request{Round: round}, &rec)
	return rec.Sent[0].Msg.(Vote)
}

func TestReplicaVotesForFirstUntilReleaseOrExpiry(t *testing.T) {
	r, _ := NewReplica(cfg(), 0)
	if v := vote(r, 0, "a", 1); !v.Granted {
		t.Fatal("first request refused")
	}
	if v := vote(r, 1, "b", 1); v.Granted || v.Owner != "a" {
		t.Fatalf("second requester: %+v, want refused naming a", v)
	}
	r.Receive(2, core.ClientAddr("a"), Release{Round: 1}, &core.Recorder{})
	if v := vote(r, 3, "b", 2); !v.Granted {
		t.Fatal("vote not free after release")
	}
	if v := vote(r, 3+core.Time(lease), "c", 1); !v.Granted {
		t.Fatal("vote not free after the lease")
	}
}

func TestClientWinsWithMAndGivesBackWhenOutOfReach(t *testing.T) {
	c, _ := NewClient(cfg(), "a", rand.New(rand.NewPCG(1, 1)))
	var rec core.Recorder
	_ = c.Acquire(0, 0, &rec)
	rec.Reset()
	c.Receive(1, core.ReplicaAddr(0), Vote{Round: 1, Granted: true}, &rec)
	c.Receive(1, core.ReplicaAddr(1), Vote{Round: 1}, &rec)
	c.Receive(1, core.ReplicaAddr(2), Vote{Round: 1}, &rec)
	c.Receive(1, core.ReplicaAddr(3), Vote{Round: 1}, &rec) // 3 refusals of 5: m=3 is out of reach
	releases := 0
	for _, s := range rec.Sent {
		if _, ok := s.Msg.(Release); ok {
			releases++
		}
	}
	if releases != 2 || len(rec.Timers) != 1 { // the granted vote and the one not yet answered
		t.Fatalf("lost round: %d releases, timers %v", releases, rec.Timers)
	}
	rec.Reset()
	c.Wake(2, core.Timer{Kind: timerRetry, Round: 1}, &rec)
	for i := range 3 {
		c.Receive(2, core.ReplicaAddr(i), Vote{Round: 2, Granted: true}, &rec)
	}
	if len(rec.Events) != 1 || rec.Events[0].(mutex.Acquired).Rounds != 2 {
		t.Fatalf("events %v", rec.Events)
	}
}

func TestImpossibleConfigurations(t *testing.T) {
	for _, c := range []Config{{N: 4, M: 2, Lease: lease}, {N: 3, M: 2}, {N: 3, M: 2, Lease: lease, MaxDelay: -1}} {
		if _, err := NewReplica(c, 0); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}
