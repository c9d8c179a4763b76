package sigma

import (
	"strings"
	"testing"
	"time"

	"github.com/dhtsync/dhtsync/core"
	"github.com/dhtsync/dhtsync/mutex"
)

const (
	lease = 2 * time.Second
	delta = 100 * time.Millisecond
)

func testConfig() Config { return Config{N: 5, M: 4, Lease: lease, MaxDelay: delta} }

func newReplica(t *testing.T, cfg Config, now core.Time) *Replica {
	t.Helper()
	r, err := NewReplica(cfg, 7, now)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// send delivers m from client c to r and returns the responses r sent.
func send(r *Replica, now core.Time, c core.ClientID, m core.Message) []core.Sent {
	var rec core.Recorder
	r.Receive(now, core.ClientAddr(c), m, &rec)
	return rec.Sent
}

func resp(t *testing.T, sent []core.Sent, to core.ClientID) Response {
	t.Helper()
	for _, s := range sent {
		if s.To.Client == to {
			return s.Msg.(Response)
		}
	}
	t.Fatalf("no response to %s in %v", to, sent)
	return Response{}
}

func TestReplicaVotesForFirstAndQueuesByTimestamp(t *testing.T) {
	r := newReplica(t, testConfig(), 0)
	if got := resp(t, send(r, 0, "a", Request{TS: 50, Seq: 1}), "a"); got.Owner != "a" || got.Position != 0 || got.LeaseLeft != lease {
		t.Fatalf("first requester: %+v", got)
	}
	send(r, 1, "late", Request{TS: 90, Seq: 1})
	send(r, 2, "early", Request{TS: 10, Seq: 1})
	send(r, 3, "tie-b", Request{TS: 30, Seq: 1})
	send(r, 3, "tie-a", Request{TS: 30, Seq: 1})
	want := []core.ClientID{"early", "tie-a", "tie-b", "late"}
	for i, c := range want {
		got := resp(t, send(r, 4, c, Request{TS: map[core.ClientID]uint64{"early": 10, "tie-a": 30, "tie-b": 30, "late": 90}[c], Seq: 2}), c)
		if got.Position != i+1 || got.Owner != "a" || got.WaitHint != time.Duration(i+1)*lease/4 {
			t.Fatalf("%s: %+v, want position %d behind a with hint %v", c, got, i+1, time.Duration(i+1)*lease/4)
		}
	}
	// Release by the owner: the earliest queued request becomes owner and is told.
	sent := send(r, 5, "a", Release{TS: 50})
	if got := resp(t, sent, "early"); got.Owner != "early" || got.Position != 0 || got.Seq != 0 {
		t.Fatalf("after release: %+v", got)
	}
}

func TestYieldHandsTheVoteToTheEarliest(t *testing.T) {
	r := newReplica(t, testConfig(), 0)
	send(r, 0, "late", Request{TS: 90, Seq: 1})
	send(r, 1, "early", Request{TS: 10, Seq: 1})
	sent := send(r, 2, "late", Yield{TS: 90, Seq: 2})
	if got := resp(t, sent, "early"); got.Owner != "early" || got.Position != 0 {
		t.Fatalf("new owner not told: %+v", got)
	}
	if got := resp(t, sent, "late"); got.Owner != "early" || got.Position != 1 || got.Seq != 2 {
		t.Fatalf("yielder not told where it stands, in reply to its yield: %+v", got)
	}
	// A yield from someone who is not owner changes nothing.
	if got := resp(t, send(r, 3, "late", Yield{TS: 90, Seq: 3}), "late"); got.Owner != "early" {
		t.Fatalf("yield by a non-owner moved the vote: %+v", got)
	}
}

// A yield that arrives after a later message of the same request (reordered in
// the network) is void: the client has counted the vote since.
func TestYieldOvertakenByALaterMessageIsIgnored(t *testing.T) {
	r := newReplica(t, testConfig(), 0)
	send(r, 0, "a", Request{TS: 5, Seq: 1})
	send(r, 1, "b", Request{TS: 9, Seq: 1})
	send(r, 2, "a", Renew{TS: 5, Seq: 4})
	if got := resp(t, send(r, 3, "a", Yield{TS: 5, Seq: 3}), "a"); got.Owner != "a" || got.Seq != 3 {
		t.Fatalf("an overtaken yield moved the vote: %+v", got)
	}
}

func TestLateRequestAfterReleaseIsIgnored(t *testing.T) {
	r := newReplica(t, testConfig(), 0)
	send(r, 0, "a", Request{TS: 5})
	send(r, 1, "a", Release{TS: 5})
	if sent := send(r, 2, "a", Request{TS: 5, Seq: 3}); len(sent) != 0 {
		t.Fatalf("a delayed copy of a released request was served: %v", sent)
	}
	if got := resp(t, send(r, 3, "b", Request{TS: 6}), "b"); got.Owner != "b" {
		t.Fatalf("replica holds a phantom owner: %+v", got)
	}
	if got := resp(t, send(r, 4, "a", Request{TS: 7}), "a"); got.Position != 1 {
		t.Fatalf("a's next request not queued: %+v", got)
	}
}

func TestLeaseExpiryAndRenewal(t *testing.T) {
	r := newReplica(t, testConfig(), 0)
	var rec core.Recorder
	r.Receive(0, core.ClientAddr("a"), Request{TS: 1}, &rec)
	r.Receive(1, core.ClientAddr("b"), Request{TS: 2}, &rec)
	r.Receive(core.Time(lease/2), core.ClientAddr("a"), Renew{TS: 1, Seq: 2}, &rec)
	if len(rec.Timers) != 1 || rec.Timers[0].At != core.Time(lease) {
		t.Fatalf("lease timer %+v, want one at the first expiry", rec.Timers)
	}
	rec.Reset()
	r.Wake(core.Time(lease), core.Timer{Kind: timerLease}, &rec)
	if len(rec.Sent) != 0 || len(rec.Timers) != 1 || rec.Timers[0].At != core.Time(lease/2+lease) {
		t.Fatalf("renewed lease expired early: sent %v timers %v", rec.Sent, rec.Timers)
	}
	rec.Reset()
	r.Wake(core.Time(lease/2+lease), core.Timer{Kind: timerLease}, &rec)
	if got := resp(t, rec.Sent, "b"); got.Owner != "b" {
		t.Fatalf("expired owner not replaced by the queue head: %+v", got)
	}
}

func TestGracePeriodQueuesButGrantsNothing(t *testing.T) {
	cfg := testConfig()
	cfg.Grace = true
	r := newReplica(t, cfg, 100)
	var rec core.Recorder
	r.Start(100, &rec)
	if len(rec.Timers) != 1 || rec.Timers[0].At != 100+core.Time(lease) {
		t.Fatalf("grace timer %+v", rec.Timers)
	}
	got := resp(t, send(r, 200, "a", Request{TS: 1}), "a")
	if got.Owner != "" || got.Position != 1 || got.WaitHint < lease-200 {
		t.Fatalf("during grace: %+v, want queued with a hint to the end of grace", got)
	}
	rec.Reset()
	r.Wake(100+core.Time(lease), core.Timer{Kind: timerGrace}, &rec)
	if got := resp(t, rec.Sent, "a"); got.Owner != "a" {
		t.Fatalf("after grace the queue head was not made owner: %+v", got)
	}
}

// drive delivers the client's messages to the replicas and the replicas' answers
// back, instantly, until nothing moves; it returns the client's events.
func drive(t *testing.T, now core.Time, c *Client, replicas []*Replica, first []core.Sent) []core.Event {
	t.Helper()
	var events []core.Event
	queue := first
	for len(queue) > 0 {
		m := queue[0]
		queue = queue[1:]
		if m.To.IsReplica() {
			var rec core.Recorder
			replicas[m.To.Replica].Receive(now, core.ClientAddr(c.ID()), m.Msg, &rec)
			for _, s := range rec.Sent {
				var back core.Recorder
				c.Receive(now, m.To, s.Msg, &back)
				queue = append(queue, back.Sent...)
				events = append(events, back.Events...)
			}
		}
	}
	return events
}

func TestContentionFreeClientWinsInOneRound(t *testing.T) {
	cfg := testConfig()
	replicas := make([]*Replica, cfg.N)
	for i := range replicas {
		replicas[i] = newReplica(t, cfg, 0)
	}
	c, err := NewClient(cfg, "a")
	if err != nil {
		t.Fatal(err)
	}
	var rec core.Recorder
	if err := c.Acquire(0, 0, &rec); err != nil {
		t.Fatal(err)
	}
	events := drive(t, 0, c, replicas, rec.Sent)
	if len(events) != 1 {
		t.Fatalf("events %v", events)
	}
	// Four of five votes answered at once, each lasting the lease from the send;
	// the lease ends when fewer than n-m+1 = 2 are left: at the lease.
	if a := events[0].(mutex.Acquired); a.Until != core.Time(lease) || a.Rounds != 1 {
		t.Fatalf("acquired %+v", a)
	}
	if err := c.Acquire(0, 0, &rec); err != ErrBusy {
		t.Fatalf("Acquire while holding: %v", err)
	}
}

func TestSplitVoteIsConfirmedThenYielded(t *testing.T) {
	cfg := Config{N: 4, M: 3, Lease: lease, MaxDelay: delta}
	c, _ := NewClient(cfg, "me")
	var rec core.Recorder
	_ = c.Acquire(0, 0, &rec)
	ts := rec.Sent[0].Msg.(Request).TS
	answer := func(now core.Time, i int, owner core.ClientID, seq uint64) {
		pos := 1
		if owner == "me" {
			pos = 0
		}
		c.Receive(now, core.ReplicaAddr(i), Response{ClientTS: ts, Seq: seq, Owner: owner, OwnerTS: 1, Position: pos,
			LeaseLeft: lease, Incarnation: 1, Version: uint64(now) + 1}, &rec)
	}
	rec.Reset()
	answer(1, 0, "me", 1)
	answer(1, 1, "me", 1)
	answer(1, 2, "x", 1)
	answer(1, 3, "y", 1) // 2 + 1 + 1: nobody can reach 3
	var refreshed, yields int
	for _, s := range rec.Sent {
		switch s.Msg.(type) {
		case Request:
			refreshed++
		case Yield:
			yields++
		}
	}
	if yields != 0 || refreshed != 2 {
		t.Fatalf("split first seen: %d yields, %d refresh requests; want 0 and 2 (to the replicas of others)", yields, refreshed)
	}
	rec.Reset()
	answer(5, 2, "x", 2)
	answer(5, 3, "y", 2) // the split survives fresh answers
	for _, s := range rec.Sent {
		if _, ok := s.Msg.(Yield); ok {
			yields++
		}
	}
	if yields != 2 {
		t.Fatalf("confirmed split: %d yields, want one per vote held (2)", yields)
	}
}

func TestBadConfigurationsAreClearErrors(t *testing.T) {
	cases := []struct {
		cfg  Config
		want string
	}{
		{Config{N: 4, M: 2, Lease: lease}, "need n/2 < m ≤ n"},
		{Config{N: 4, M: 5, Lease: lease}, "need n/2 < m ≤ n"},
		{Config{N: 0, M: 0, Lease: lease}, "at least one replica"},
		{Config{N: 5, M: 3}, "must be positive"},
		{Config{N: 5, M: 3, Lease: lease, MaxDelay: lease}, "must exceed the round trip"},
	}
	for _, c := range cases {
		if err := c.cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
		}
	}
	if _, err := NewClient(testConfig(), ""); err == nil {
		t.Error("empty client id accepted")
	}
	c, _ := NewClient(testConfig(), "a")
	var rec core.Recorder
	if err := c.Acquire(0, lease/2, &rec); err == nil || len(rec.Sent) != 0 {
		t.Errorf("per-call lease accepted: %v", err)
	}
}
