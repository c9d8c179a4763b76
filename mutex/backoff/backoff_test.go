package backoff

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/dhtsync/dhtsync/core"
	"github.com/dhtsync/dhtsync/mutex"
)

const (
	lease = 100 * time.Millisecond
	delta = 10 * time.Millisecond // δ
)

func testConfig() Config { return Config{N: 6, B: 1, Lease: lease, MaxDelay: delta} }

func newTestClient(t *testing.T, cfg Config, id core.ClientID) *Client {
	t.Helper()
	c, err := NewClient(cfg, id, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func newTestServer(t *testing.T, cfg Config, now core.Time) *Server {
	t.Helper()
	s, err := NewServer(cfg, now)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func try(t *testing.T, s *Server, now core.Time, client core.ClientID, round uint64) TryReply {
	t.Helper()
	var rec core.Recorder
	s.Receive(now, core.ClientAddr(client), Try{Round: round, Lease: lease}, &rec)
	if len(rec.Sent) != 1 {
		t.Fatalf("server sent %d messages, want 1 reply", len(rec.Sent))
	}
	return rec.Sent[0].Msg.(TryReply)
}

func TestServerFreeExactlyAfterLockWindow(t *testing.T) {
	s := newTestServer(t, testConfig(), 0)
	if r := try(t, s, 0, "a", 1); !r.Free {
		t.Fatal("a fresh server must answer FREE")
	}
	window := core.Time(lease + 2*delta) // Δ+2δ
	if r := try(t, s, window, "b", 1); r.Free {
		t.Fatal("FREE at exactly Δ+2δ after the grant; the paper requires strictly more")
	}
	if r := try(t, s, window+1, "b", 2); !r.Free {
		t.Fatal("LOCKED just after Δ+2δ")
	}
}

func TestServerRefusesLeaseAboveMax(t *testing.T) {
	s := newTestServer(t, testConfig(), 0)
	var rec core.Recorder
	s.Receive(0, core.ClientAddr("a"), Try{Round: 1, Lease: 2 * lease}, &rec)
	if r := rec.Sent[0].Msg.(TryReply); r.Free {
		t.Fatal("granted a lease above MaxLease")
	}
	if r := try(t, s, 1, "b", 1); !r.Free {
		t.Fatal("a refused try must not lock the server")
	}
}

func TestContentionFreeAcquireIsOneRound(t *testing.T) {
	cfg := testConfig()
	c := newTestClient(t, cfg, "a")
	var rec core.Recorder
	if err := c.Acquire(0, 0, &rec); err != nil {
		t.Fatal(err)
	}
	if len(rec.Sent) != cfg.N {
		t.Fatalf("round sent %d tries, want one per server (%d)", len(rec.Sent), cfg.N)
	}
	rec.Reset()
	for i := range 5 { // q = ⌈(6+4)/2⌉ = 5
		c.Receive(core.Time(2*delta), core.ReplicaAddr(i), TryReply{Round: 1, Free: true}, &rec)
	}
	if len(rec.Events) != 1 {
		t.Fatalf("events after a quorum of FREE: %v", rec.Events)
	}
	got := rec.Events[0].(mutex.Acquired)
	if got.Until != core.Time(lease) || got.Rounds != 1 {
		t.Fatalf("acquired %+v, want until Δ after the send and 1 round", got)
	}
	if err := c.Acquire(0, 0, &rec); err != ErrBusy {
		t.Fatalf("second Acquire while holding: %v, want ErrBusy", err)
	}
}

func TestClientWinsWithBLockedAndLosesWithMore(t *testing.T) {
	for locked, wantWin := range map[int]bool{0: true, 1: true, 2: false} {
		c := newTestClient(t, testConfig(), "a")
		var rec core.Recorder
		_ = c.Acquire(0, 0, &rec)
		rec.Reset()
		for i := range 5 {
			c.Receive(1, core.ReplicaAddr(i), TryReply{Round: 1, Free: i >= locked}, &rec)
		}
		if won := len(rec.Events) == 1; won != wantWin {
			t.Fatalf("%d LOCKED of 5: won=%v, want %v", locked, won, wantWin)
		}
		if !wantWin {
			if len(rec.Timers) != 1 || rec.Timers[0].Timer.Kind != timerRetry {
				t.Fatalf("a lost round must arm one retry timer, got %+v", rec.Timers)
			}
			if d := rec.Timers[0].At.Sub(1); d < lease+4*delta || d > 2*(lease+4*delta) {
				t.Fatalf("first backoff %v outside [Δ+4δ, 2(Δ+4δ)]", d)
			}
		}
	}
}

func TestDuplicateAndStaleRepliesAreIgnored(t *testing.T) {
	c := newTestClient(t, testConfig(), "a")
	var rec core.Recorder
	_ = c.Acquire(0, 0, &rec)
	for range 5 { // the same server five times is one answer
		c.Receive(1, core.ReplicaAddr(0), TryReply{Round: 1, Free: true}, &rec)
	}
	for i := 1; i < 5; i++ { // another round's answers
		c.Receive(1, core.ReplicaAddr(i), TryReply{Round: 7, Free: true}, &rec)
	}
	c.Receive(1, core.ReplicaAddr(99), TryReply{Round: 1, Free: true}, &rec) // no such server
	if len(rec.Events) != 0 {
		t.Fatalf("won on duplicates and stale replies: %v", rec.Events)
	}
}

func TestSafeModeIgnoresLateReplies(t *testing.T) {
	cfg := testConfig()
	cfg.SafeMode = true
	c := newTestClient(t, cfg, "a")
	var rec core.Recorder
	_ = c.Acquire(0, 0, &rec)
	late := core.Time(2*delta + 1)
	for i := range 6 {
		c.Receive(late, core.ReplicaAddr(i), TryReply{Round: 1, Free: true}, &rec)
	}
	if len(rec.Events) != 0 {
		t.Fatal("safe mode accepted replies older than 2δ")
	}
}

func TestEarlyReleaseOnlyByTheLastGrantee(t *testing.T) {
	cfg := testConfig()
	cfg.EarlyRelease = true
	s := newTestServer(t, cfg, 0)
	try(t, s, 0, "a", 1)
	var rec core.Recorder
	s.Receive(1, core.ClientAddr("b"), Release{Round: 1}, &rec) // not the grantee
	s.Receive(1, core.ClientAddr("a"), Release{Round: 9}, &rec) // wrong round
	if r := try(t, s, 2, "c", 1); r.Free {
		t.Fatal("a release from someone else (or of another round) freed the server")
	}
	s.Receive(3, core.ClientAddr("a"), Release{Round: 1}, &rec)
	if r := try(t, s, 4, "c", 2); !r.Free {
		t.Fatal("the grantee's release did not free the server")
	}
}

func TestDelayedRepliesGoToLowestID(t *testing.T) {
	cfg := testConfig()
	cfg.DelayedReplies = true
	s := newTestServer(t, cfg, 0)
	try(t, s, 0, "m", 1)
	var rec core.Recorder
	s.Receive(5, core.ClientAddr("z"), Try{Round: 1, Lease: lease}, &rec)
	s.Receive(6, core.ClientAddr("b"), Try{Round: 3, Lease: lease}, &rec)
	if len(rec.Sent) != 0 || len(rec.Timers) != 1 {
		t.Fatalf("locked server with delayed replies: sent %v timers %v", rec.Sent, rec.Timers)
	}
	wake := rec.Timers[0].At
	if wake != core.Time(lease+2*delta+1) {
		t.Fatalf("free timer at %v, want just after Δ+2δ", wake)
	}
	rec.Reset()
	s.Wake(wake, core.Timer{Kind: timerFree}, &rec)
	if len(rec.Sent) != 2 {
		t.Fatalf("sent %d replies at wake-up, want 2", len(rec.Sent))
	}
	for _, m := range rec.Sent {
		r := m.Msg.(TryReply)
		if (m.To.Client == "b") != r.Free {
			t.Fatalf("reply %+v to %v: FREE must go to the lowest id only", r, m.To)
		}
		if r.Free && r.Held != wake.Sub(6) {
			t.Fatalf("held %v, want the time the try waited (%v)", r.Held, wake.Sub(6))
		}
	}
}

func TestGraceLocksANewIncarnation(t *testing.T) {
	cfg := testConfig()
	cfg.Grace = true
	s := newTestServer(t, cfg, 1000)
	if r := try(t, s, 1000+core.Time(lease+2*delta), "a", 1); r.Free {
		t.Fatal("a new incarnation granted during its grace period")
	}
	if r := try(t, s, 1001+core.Time(lease+2*delta), "a", 2); !r.Free {
		t.Fatal("still locked after the grace period")
	}
}

func TestBadConfigurationsAreClearErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	cases := []struct {
		cfg  Config
		id   core.ClientID
		want string
	}{
		{Config{N: 5, B: 1, Lease: lease, MaxDelay: delta}, "a", "n ≥ 5b+1"},
		{Config{N: 6, B: 1, Lease: 0, MaxDelay: delta}, "a", "must be positive"},
		{Config{N: 6, B: 1, Lease: -lease, MaxDelay: delta}, "a", "must be positive"},
		{Config{N: 6, B: 1, Lease: lease, MaxDelay: -1}, "a", "cannot be negative"},
		{Config{N: 6, B: 1, Lease: lease, MaxLease: lease / 2}, "a", "shorter than"},
		{Config{N: 6, B: 1, Lease: 2 * delta, MaxDelay: delta}, "a", "must exceed the round trip"},
		{testConfig(), "", "id must not be empty"},
	}
	for _, c := range cases {
		_, err := NewClient(c.cfg, c.id, rng)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewClient(%+v) = %v, want %q", c.cfg, err, c.want)
		}
	}
	c := newTestClient(t, testConfig(), "a")
	var rec core.Recorder
	if err := c.Acquire(0, 3*lease, &rec); err == nil || len(rec.Sent) != 0 {
		t.Fatalf("lease above MaxLease: err %v, sent %d", err, len(rec.Sent))
	}
	for _, bad := range []time.Duration{-1, 2 * delta} {
		if err := c.Acquire(0, bad, &rec); err == nil {
			t.Fatalf("lease %v accepted", bad)
		}
	}
}

func TestPoliciesStayInTheirWindows(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	base := 50 * time.Millisecond
	for s := 1; s <= 70; s++ {
		expHi := base * time.Duration(min(int64(1)<<min(s, 62), maxWindow))
		polyHi := base * time.Duration(min(int64((s+1)*(s+1)), maxWindow))
		for range 50 {
			if d := (Exponential{}).Delay(rng, s, base); d < base || d > expHi {
				t.Fatalf("exponential s=%d: %v outside [%v, %v]", s, d, base, expHi)
			}
			if d := (Polynomial{Degree: 2}).Delay(rng, s, base); d < base || d > polyHi {
				t.Fatalf("polynomial s=%d: %v outside [%v, %v]", s, d, base, polyHi)
			}
		}
	}
}
