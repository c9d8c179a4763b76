package wire

import (
	"bufio"
	"bytes"
	"errors"
	"reflect"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/dhtsync/dhtsync/core"
	"github.com/dhtsync/dhtsync/mutex"
	"github.com/dhtsync/dhtsync/mutex/backoff"
	"github.com/dhtsync/dhtsync/mutex/sigma"
	"github.com/dhtsync/dhtsync/ordering"
	"github.com/dhtsync/dhtsync/p2p/wire/pb"
)

func sampleMessages() []core.Message {
	s1 := ordering.Derive(ordering.Counter{}, ordering.Initial(),
		[]ordering.Op{{ID: ordering.OpID{Client: "p/a", Seq: 1}, Body: ordering.CounterAdd(4)}}, 8)
	rank := ordering.Rank{N: 3, Client: "p/a"}
	op := ordering.Op{ID: ordering.OpID{Client: "p/b", Seq: 2}, Body: []byte{1, 2}}
	return []core.Message{
		backoff.Try{Round: 7, Lease: time.Second}, backoff.TryReply{Round: 7, Free: true, Held: time.Millisecond},
		backoff.Release{Round: 7},
		sigma.Request{TS: 5, Seq: 1}, sigma.Renew{TS: 5, Seq: 2}, sigma.Yield{TS: 5, Seq: 3}, sigma.Release{TS: 5},
		sigma.Response{ClientTS: 5, Seq: 3, Owner: "p/x", OwnerTS: 4, Position: -1, WaitHint: time.Second,
			LeaseLeft: 0, Clock: 9, Incarnation: 2, Version: 11},
		ordering.Submit{Op: op}, ordering.SubmitReply{ID: op.ID, Result: []byte{0, 4}},
		ordering.Get{Rank: rank},
		ordering.GetReply{Rank: rank, Committed: s1, Proposed: nil, Proposer: rank, Pending: []ordering.Op{op}},
		ordering.Propose{Rank: rank, State: s1}, ordering.Commit{Rank: rank, State: s1},
		ordering.Ack{Rank: rank, Version: 1, Commit: true}, ordering.RankException{Rank: rank, Max: rank},
		ordering.StateRequest{}, ordering.StateReply{Committed: s1, MaxRank: rank},
		ordering.StateReply{Recovering: true},
		Redirect{Key: []byte{1}, Closer: []*pb.PeerInfo{{Id: []byte("peer")}}},
		Error{Code: pb.Error_MALFORMED, Text: "x"},
	}
}

func TestEveryMessageSurvivesTheWire(t *testing.T) {
	for _, m := range sampleMessages() {
		in := Envelope{Resource: "r", From: core.ClientAddr("p/a"), To: core.ReplicaAddr(3), Msg: m}
		env, err := Encode(in)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := WriteFrame(&buf, env, MaxMessage); err != nil {
			t.Fatal(err)
		}
		read, err := ReadFrame(bufio.NewReader(&buf), MaxMessage)
		if err != nil {
			t.Fatalf("%T: %v", m, err)
		}
		out, err := Decode(read)
		if err != nil {
			t.Fatalf("%T: %v", m, err)
		}
		if redirect, ok := m.(Redirect); ok { // protobuf messages compare with proto.Equal
			got := out.Msg.(Redirect)
			if !bytes.Equal(got.Key, redirect.Key) || !proto.Equal(got.Closer[0], redirect.Closer[0]) {
				t.Fatalf("redirect %v came back as %v", redirect, got)
			}
			continue
		}
		if !reflect.DeepEqual(in, out) {
			t.Fatalf("%T:\n sent %+v\n  got %+v", m, in, out)
		}
	}
}

func TestStatesSurviveTheWireOnAnotherClock(t *testing.T) {
	s1 := ordering.Derive(ordering.Counter{}, ordering.Initial(),
		[]ordering.Op{{ID: ordering.OpID{Client: "p/a", Seq: 1}, Body: ordering.CounterAdd(4)}}, 8)
	const sent, arrived = core.Time(1_000_000), core.Time(5_000_000) // the receiver's clock is 4 ms ahead
	shift := func(t core.Time) core.Time { return t + arrived - sent }
	bo := backoff.ServerState{Granted: true, LastGranted: sent - 100, LastLease: time.Second, LastClient: "p/a", LastRound: 3}
	sg := sigma.ReplicaState{Incarnation: 4, Version: 9, Owner: sigma.QueuedRequest{Client: "p/a", TS: 2},
		OwnerSince: sent - 50, Expiry: sent + 900, GraceUntil: sent - 10, Queue: []sigma.QueuedRequest{{Client: "p/b", TS: 3}},
		MeanCS: time.Millisecond, LastRelease: sent - 20, Clock: 3,
		Finished: []mutex.FinishedRequest{{Client: "p/c", Req: 1, At: sent - 30}}}
	ord := OrderingState{Server: ordering.ServerState{Committed: s1, MaxRank: ordering.Rank{N: 2, Client: "p/a"}}, Mutex: sg}
	for _, st := range []any{bo, sg, ord} {
		id := StateID{Resource: "r", Index: 2, Incarnation: 4}
		gotID, got, err := DecodeState(roundTrip(t, EncodeState(sent, id, st)), arrived)
		if err != nil || gotID != id {
			t.Fatalf("%T: %+v, %v", st, gotID, err)
		}
		want := st
		switch st := st.(type) {
		case backoff.ServerState:
			st.LastGranted = shift(st.LastGranted)
			want = st
		case sigma.ReplicaState:
			st.OwnerSince, st.Expiry, st.GraceUntil, st.LastRelease = shift(st.OwnerSince), shift(st.Expiry), shift(st.GraceUntil), shift(st.LastRelease)
			st.Finished = []mutex.FinishedRequest{{Client: "p/c", Req: 1, At: shift(sent - 30)}} // a copy: sg's is shared
			want = st
		case OrderingState:
			m := st.Mutex
			m.OwnerSince, m.Expiry, m.GraceUntil, m.LastRelease = shift(m.OwnerSince), shift(m.Expiry), shift(m.GraceUntil), shift(m.LastRelease)
			m.Finished = []mutex.FinishedRequest{{Client: "p/c", Req: 1, At: shift(sent - 30)}}
			st.Mutex = m
			want = st
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%T:\n want %+v\n  got %+v", st, want, got)
		}
	}
}

func roundTrip(t *testing.T, st *pb.State) *pb.State {
	b, err := proto.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	out := &pb.State{}
	if err := proto.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestMalformedEnvelopesAreErrors(t *testing.T) {
	client, replica := &pb.Addr{Replica: -1, Client: "p/a"}, &pb.Addr{Replica: 1}
	cases := map[string]*pb.Envelope{
		"no body":           {From: client, To: replica},
		"no from":           {To: replica, Body: &pb.Envelope_SigmaRelease{SigmaRelease: &pb.SigmaRelease{}}},
		"nameless client":   {From: &pb.Addr{Replica: -1}, To: replica, Body: &pb.Envelope_SigmaRelease{SigmaRelease: &pb.SigmaRelease{}}},
		"replica below -1":  {From: client, To: &pb.Addr{Replica: -7}, Body: &pb.Envelope_SigmaRelease{SigmaRelease: &pb.SigmaRelease{}}},
		"negative lease":    {From: client, To: replica, Body: &pb.Envelope_BackoffTry{BackoffTry: &pb.BackoffTry{Lease: -1}}},
		"huge position":     {From: replica, To: client, Body: &pb.Envelope_SigmaResponse{SigmaResponse: &pb.SigmaResponse{Position: 1 << 40}}},
		"op without id":     {From: client, To: replica, Body: &pb.Envelope_OrderingSubmit{OrderingSubmit: &pb.OrderingSubmit{Op: &pb.Op{}}}},
		"commit no state":   {From: client, To: replica, Body: &pb.Envelope_OrderingCommit{OrderingCommit: &pb.OrderingCommit{}}},
		"short parent":      {From: client, To: replica, Body: &pb.Envelope_OrderingCommit{OrderingCommit: &pb.OrderingCommit{State: &pb.Snapshot{Parent: []byte{1}}}}},
		"unsorted marks":    {From: client, To: replica, Body: &pb.Envelope_OrderingCommit{OrderingCommit: &pb.OrderingCommit{State: &pb.Snapshot{Parent: make([]byte, 32), Applied: []*pb.Mark{{Client: "b"}, {Client: "a"}}}}}},
		"hand-off no state": {From: replica, To: replica, Body: &pb.Envelope_HandOff{HandOff: &pb.HandOff{}}},
		"state reply no σc": {From: replica, To: replica, Body: &pb.Envelope_OrderingStateReply{OrderingStateReply: &pb.OrderingStateReply{}}},
	}
	for name, env := range cases {
		if _, err := Decode(env); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: got %v, want ErrMalformed", name, err)
		}
	}
}

func TestFramesAreCapped(t *testing.T) {
	env, _ := Encode(Envelope{Resource: "r", From: core.ClientAddr("p/a"), To: core.ReplicaAddr(0),
		Msg: ordering.Submit{Op: ordering.Op{ID: ordering.OpID{Client: "p/a", Seq: 1}, Body: make([]byte, 1000)}}})
	var buf bytes.Buffer
	if err := WriteFrame(&buf, env, 100); err == nil {
		t.Fatal("wrote a frame over the cap")
	}
	if err := WriteFrame(&buf, env, MaxMessage); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFrame(bufio.NewReader(&buf), 100); !errors.Is(err, ErrMalformed) {
		t.Fatalf("read a frame over the cap: %v", err)
	}
	garbage := bufio.NewReader(bytes.NewReader([]byte{5, 0xff, 0xff, 0xff, 0xff, 0xff}))
	if _, err := ReadFrame(garbage, 100); !errors.Is(err, ErrMalformed) {
		t.Fatalf("garbage: %v", err)
	}
}

func FuzzDecode(f *testing.F) {
	for _, m := range sampleMessages() {
		env, _ := Encode(Envelope{Resource: "r", From: core.ClientAddr("p/a"), To: core.ReplicaAddr(1), Msg: m})
		b, _ := proto.Marshal(env)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		env := &pb.Envelope{}
		if proto.Unmarshal(b, env) != nil {
			return
		}
		out, err := Decode(env)
		if err != nil {
			return
		}
		// Whatever decodes must encode again and decode to the same thing.
		again, err := Encode(out)
		if err != nil {
			t.Fatalf("decoded %T does not encode: %v", out.Msg, err)
		}
		if _, err := Decode(again); err != nil {
			t.Fatalf("re-encoded %T does not decode: %v", out.Msg, err)
		}
	})
}
