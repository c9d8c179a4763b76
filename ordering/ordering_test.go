package ordering

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/dhtsync/dhtsync/core"
)

func cfg() Config { return Config{N: 7, B: 1, Object: Counter{}} }

func op(c core.ClientID, seq uint64, k int64) Op { return Op{ID: OpID{c, seq}, Body: CounterAdd(k)} }

func TestDeriveAppliesInSequenceAndSkipsGapsAndDuplicates(t *testing.T) {
	s1 := Derive(Counter{}, Initial(), []Op{op("a", 2, 10), op("a", 1, 1), op("b", 2, 100)}, 8)
	// a1 then a2 apply; b2 waits for b1.
	if s1.Version != 1 || DecodeCounter(s1.Data) != 11 || !s1.Reflects(OpID{"a", 2}) || s1.Reflects(OpID{"b", 2}) {
		t.Fatalf("derived %+v value %d", s1, DecodeCounter(s1.Data))
	}
	if r, _ := s1.Result(OpID{"a", 1}); !bytes.Equal(r, CounterResult(1)) {
		t.Fatalf("a1 result %v, want the value 1", r)
	}
	if Derive(Counter{}, s1, []Op{op("a", 1, 5), op("b", 2, 100)}, 8) != nil {
		t.Fatal("re-applying a reflected op or applying past a gap made a new version")
	}
	if s1.Parent != Initial().Digest() {
		t.Fatal("parent is not the state it was derived from")
	}
	// Results are garbage-collected after KeepVersions versions.
	s := s1
	for i := uint64(1); i <= 3; i++ {
		s = Derive(Counter{}, s, []Op{op("c", i, 1)}, 2)
	}
	if _, ok := s.Result(OpID{"a", 1}); ok {
		t.Fatal("a result older than KeepVersions was kept")
	}
}

func TestServerRanks(t *testing.T) {
	s, err := NewServer(cfg(), false)
	if err != nil {
		t.Fatal(err)
	}
	var rec core.Recorder
	send := func(m core.Message) core.Message {
		rec.Reset()
		s.Receive(0, core.ClientAddr("x"), m, &rec)
		return rec.Sent[0].Msg
	}
	r5, r7 := Rank{5, "x"}, Rank{7, "x"}
	if _, ok := send(Get{r5}).(GetReply); !ok {
		t.Fatal("first get refused")
	}
	if e, ok := send(Get{r5}).(RankException); !ok || e.Max != r5 {
		t.Fatal("a get must carry a rank above every rank seen")
	}
	state := Derive(Counter{}, Initial(), []Op{op("a", 1, 1)}, 8)
	if _, ok := send(Propose{r5, state}).(Ack); !ok {
		t.Fatal("propose at the current rank refused")
	}
	send(Get{r7})
	if e, ok := send(Commit{r5, state}).(RankException); !ok || e.Max != r7 {
		t.Fatal("a commit below the highest rank seen was accepted")
	}
	if _, ok := send(Commit{r7, state}).(Ack); !ok || s.Committed() != state {
		t.Fatal("commit at the highest rank refused")
	}
}

func TestServerAnswersSubmittersOnCommit(t *testing.T) {
	s, _ := NewServer(cfg(), false)
	var rec core.Recorder
	o := op("a", 1, 3)
	s.Receive(0, core.ClientAddr("a"), Submit{o}, &rec)
	if len(rec.Sent) != 0 {
		t.Fatal("answered before commit")
	}
	state := Derive(Counter{}, Initial(), []Op{o}, 8)
	s.Receive(0, core.ClientAddr("z"), Commit{Rank{1, "z"}, state}, &rec)
	var got []byte
	for _, m := range rec.Sent {
		if r, ok := m.Msg.(SubmitReply); ok && m.To.Client == "a" {
			got = r.Result
		}
	}
	if v, err := DecodeCounterResult(got); err != nil || v != 3 {
		t.Fatalf("submitter got %v", got)
	}
}

func TestRecoveringReplicaIsSilentUntilItHasTheState(t *testing.T) {
	s, _ := NewServer(cfg(), true)
	var rec core.Recorder
	s.Start(0, &rec)
	if len(rec.Sent) != 7 {
		t.Fatalf("asked %d replicas, want all 7", len(rec.Sent))
	}
	rec.Reset()
	s.Receive(0, core.ClientAddr("c"), Get{Rank{1, "c"}}, &rec)
	if len(rec.Sent) != 0 {
		t.Fatal("a recovering replica answered a client")
	}
	newer := Derive(Counter{}, Initial(), []Op{op("a", 1, 1)}, 8)
	// Five answers (not yet n-b = 6), then a sixth: the newest state two report wins.
	for i, st := range []*Snapshot{newer, Initial(), Initial(), newer, nil, Initial()} {
		if st == nil {
			s.Receive(0, core.ReplicaAddr(i), StateReply{Recovering: true}, &rec)
			continue
		}
		s.Receive(0, core.ReplicaAddr(i), StateReply{Committed: st, MaxRank: Rank{uint64(i), "r"}}, &rec)
	}
	if s.recovering || s.Committed() != newer {
		t.Fatalf("recovering %v, committed %v; want %v", s.recovering, s.Committed(), newer)
	}
}

func TestObjects(t *testing.T) {
	var kv KV
	st, r := kv.Apply(nil, KVPut("k", "v"))
	if res, _ := DecodeKVResult(r); res.Found {
		t.Fatal("put on an empty map found a value")
	}
	st, r = kv.Apply(st, KVCompareAndSwap("k", "v", "w"))
	if res, _ := DecodeKVResult(r); !res.Swapped || res.Value != "v" {
		t.Fatalf("cas: %+v", res)
	}
	if m, _ := DecodeKV(st); m["k"] != "w" {
		t.Fatalf("state %v", m)
	}
	var log Log
	st, r = log.Apply(nil, LogAppend("x"))
	st, r = log.Apply(st, LogAppend("y"))
	if entries, _ := DecodeLog(st); strings.Join(entries, ",") != "x,y" || decodeIndex(r) != 1 {
		t.Fatalf("log %v, index %v", entries, r)
	}
	for _, bad := range [][]byte{nil, {99}, {opAdd}, append(CounterAdd(1), 7)} {
		if _, r := (Counter{}).Apply(nil, bad); r == nil {
			t.Fatalf("malformed %v accepted", bad)
		} else if _, isErr := IsError(r); !isErr {
			t.Fatalf("malformed %v gave %v, not an error", bad, r)
		}
	}
}

func TestImpossibleConfigurations(t *testing.T) {
	if err := (Config{N: 6, B: 1, Object: Counter{}}).Validate(); err == nil || !strings.Contains(err.Error(), "6b+1") {
		t.Fatalf("n=6 b=1: %v", err)
	}
	if err := (Config{N: 7, B: 1}).Validate(); err == nil {
		t.Fatal("no object accepted")
	}
}

func decodeIndex(b []byte) uint64 {
	v, _ := binary.Uvarint(b[1:])
	return v
}

func TestNewObjectRecoversToTheInitialState(t *testing.T) {
	// Every replica of a new object in a DHT starts as a reset one: n-b answers
	// of "recovering" or version 0 mean nothing was ever committed.
	s, _ := NewServer(cfg(), true)
	var rec core.Recorder
	s.Start(0, &rec)
	for i := range 5 {
		s.Receive(0, core.ReplicaAddr(i), StateReply{Recovering: true}, &rec)
	}
	if !s.recovering {
		t.Fatal("recovered from 5 answers; n-b = 6 are needed")
	}
	s.Receive(0, core.ReplicaAddr(5), StateReply{Committed: Initial()}, &rec)
	if s.recovering || s.Committed().Version != 0 {
		t.Fatalf("recovering %v at %v; want the initial state", s.recovering, s.Committed())
	}

	// One answer above version 0 is not enough to adopt, and forbids starting empty.
	s, _ = NewServer(cfg(), true)
	s.Start(0, &rec)
	newer := Derive(Counter{}, Initial(), []Op{op("a", 1, 1)}, 8)
	for i := range 6 {
		reply := StateReply{Recovering: true}
		if i == 0 {
			reply = StateReply{Committed: newer}
		}
		s.Receive(0, core.ReplicaAddr(i), reply, &rec)
	}
	if !s.recovering {
		t.Fatalf("adopted %v although a newer state exists", s.Committed())
	}
}

func TestStateCarriesTheReplica(t *testing.T) {
	s, _ := NewServer(cfg(), false)
	var rec core.Recorder
	s.Receive(0, core.ClientAddr("a"), Submit{op("a", 1, 5)}, &rec)
	s.Receive(0, core.ClientAddr("c"), Get{Rank{3, "c"}}, &rec)
	st, ok := s.State()
	if !ok {
		t.Fatal("no state")
	}
	r, _ := RestoreServer(cfg(), st)
	got, _ := r.State()
	if got.MaxRank != (Rank{3, "c"}) || len(got.Pending) != 1 || got.Committed != st.Committed {
		t.Fatalf("restored %+v from %+v", got, st)
	}
	if _, ok := mustRecovering(t).State(); ok {
		t.Fatal("a recovering replica gave a state")
	}
}

func mustRecovering(t *testing.T) *Server {
	s, err := NewServer(cfg(), true)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestResumedReplicaRecoversAndKeepsTheNewer(t *testing.T) {
	v1 := Derive(Counter{}, Initial(), []Op{op("a", 1, 1)}, 8)
	v2 := Derive(Counter{}, v1, []Op{op("a", 2, 1)}, 8)
	for _, tc := range []struct {
		own, others, want *Snapshot
	}{{v1, v2, v2}, {v2, v1, v2}} {
		s, _ := ResumeServer(cfg(), ServerState{Committed: tc.own, MaxRank: Rank{5, "x"}})
		var rec core.Recorder
		s.Start(0, &rec)
		if len(rec.Sent) != 7 {
			t.Fatal("a resumed replica did not ask the others")
		}
		for i := range 6 {
			s.Receive(0, core.ReplicaAddr(i), StateReply{Committed: tc.others, MaxRank: Rank{1, "y"}}, &rec)
		}
		if s.recovering || s.Committed() != tc.want || s.maxRank != (Rank{5, "x"}) {
			t.Fatalf("own %v, others %v: committed %v rank %v, want %v and the own rank", tc.own, tc.others, s.Committed(), s.maxRank, tc.want)
		}
	}
}
