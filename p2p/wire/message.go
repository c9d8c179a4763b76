package wire

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/dhtsync/dhtsync/core"
	"github.com/dhtsync/dhtsync/mutex/backoff"
	"github.com/dhtsync/dhtsync/mutex/sigma"
	"github.com/dhtsync/dhtsync/ordering"
	"github.com/dhtsync/dhtsync/p2p/wire/pb"
)

// ErrMalformed wraps every decoding error.
var ErrMalformed = errors.New("wire: malformed message")

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}

// Redirect is a control message: the sender does not host Key and names the
// peers it knows closer to it.
type Redirect struct {
	Key    []byte
	Closer []*pb.PeerInfo
}

// Error is a control message: the sender could not serve a message.
type Error struct {
	Code pb.Error_Code
	Text string
}

func (e Error) Error() string { return fmt.Sprintf("remote: %s: %s", e.Code, e.Text) }

// HandOff is a control message carrying a replica to a closer peer.
type HandOff struct{ State *pb.State }

// Envelope is a decoded envelope.
type Envelope struct {
	Resource string
	From, To core.Addr
	Msg      core.Message
}

func addr(a core.Addr) *pb.Addr {
	return &pb.Addr{Replica: int32(a.Replica), Client: string(a.Client)}
}

func decodeAddr(a *pb.Addr) (core.Addr, error) {
	switch {
	case a == nil:
		return core.Addr{}, malformed("missing address")
	case a.Replica < -1:
		return core.Addr{}, malformed("replica index %d", a.Replica)
	case a.Replica == -1 && a.Client == "":
		return core.Addr{}, malformed("client address without a name")
	case a.Replica >= 0 && a.Client != "":
		return core.Addr{}, malformed("replica address with a client name")
	}
	return core.Addr{Replica: int(a.Replica), Client: core.ClientID(a.Client)}, nil
}

// Encode converts a message of the protocol cores (or a control message) to
// an envelope.
func Encode(e Envelope) (*pb.Envelope, error) {
	env := &pb.Envelope{Resource: e.Resource, From: addr(e.From), To: addr(e.To)}
	switch m := e.Msg.(type) {
	case backoff.Try:
		env.Body = &pb.Envelope_BackoffTry{BackoffTry: &pb.BackoffTry{Round: m.Round, Lease: int64(m.Lease)}}
	case backoff.TryReply:
		env.Body = &pb.Envelope_BackoffTryReply{BackoffTryReply: &pb.BackoffTryReply{Round: m.Round, Free: m.Free, Held: int64(m.Held)}}
	case backoff.Release:
		env.Body = &pb.Envelope_BackoffRelease{BackoffRelease: &pb.BackoffRelease{Round: m.Round}}
	case sigma.Request:
		env.Body = &pb.Envelope_SigmaRequest{SigmaRequest: &pb.SigmaRequest{Ts: m.TS, Seq: m.Seq}}
	case sigma.Renew:
		env.Body = &pb.Envelope_SigmaRenew{SigmaRenew: &pb.SigmaRenew{Ts: m.TS, Seq: m.Seq}}
	case sigma.Yield:
		env.Body = &pb.Envelope_SigmaYield{SigmaYield: &pb.SigmaYield{Ts: m.TS, Seq: m.Seq}}
	case sigma.Release:
		env.Body = &pb.Envelope_SigmaRelease{SigmaRelease: &pb.SigmaRelease{Ts: m.TS}}
	case sigma.Response:
		env.Body = &pb.Envelope_SigmaResponse{SigmaResponse: &pb.SigmaResponse{ClientTs: m.ClientTS, Seq: m.Seq,
			Owner: string(m.Owner), OwnerTs: m.OwnerTS, Position: int64(m.Position), WaitHint: int64(m.WaitHint),
			LeaseLeft: int64(m.LeaseLeft), Clock: m.Clock, Incarnation: m.Incarnation, Version: m.Version}}
	case ordering.Submit:
		env.Body = &pb.Envelope_OrderingSubmit{OrderingSubmit: &pb.OrderingSubmit{Op: op(m.Op)}}
	case ordering.SubmitReply:
		env.Body = &pb.Envelope_OrderingSubmitReply{OrderingSubmitReply: &pb.OrderingSubmitReply{Id: opID(m.ID), Result: m.Result}}
	case ordering.Get:
		env.Body = &pb.Envelope_OrderingGet{OrderingGet: &pb.OrderingGet{Rank: rank(m.Rank)}}
	case ordering.GetReply:
		env.Body = &pb.Envelope_OrderingGetReply{OrderingGetReply: &pb.OrderingGetReply{Rank: rank(m.Rank),
			Committed: snapshot(m.Committed), Proposed: snapshot(m.Proposed), Proposer: rank(m.Proposer), Pending: ops(m.Pending)}}
	case ordering.Propose:
		env.Body = &pb.Envelope_OrderingPropose{OrderingPropose: &pb.OrderingPropose{Rank: rank(m.Rank), State: snapshot(m.State)}}
	case ordering.Commit:
		env.Body = &pb.Envelope_OrderingCommit{OrderingCommit: &pb.OrderingCommit{Rank: rank(m.Rank), State: snapshot(m.State)}}
	case ordering.Ack:
		env.Body = &pb.Envelope_OrderingAck{OrderingAck: &pb.OrderingAck{Rank: rank(m.Rank), Version: m.Version, Commit: m.Commit}}
	case ordering.RankException:
		env.Body = &pb.Envelope_OrderingRankException{OrderingRankException: &pb.OrderingRankException{Rank: rank(m.Rank), Max: rank(m.Max)}}
	case ordering.StateRequest:
		env.Body = &pb.Envelope_OrderingStateRequest{OrderingStateRequest: &pb.OrderingStateRequest{}}
	case ordering.StateReply:
		env.Body = &pb.Envelope_OrderingStateReply{OrderingStateReply: &pb.OrderingStateReply{Committed: snapshot(m.Committed),
			MaxRank: rank(m.MaxRank), Recovering: m.Recovering}}
	case Redirect:
		env.Body = &pb.Envelope_Redirect{Redirect: &pb.Redirect{Key: m.Key, Closer: m.Closer}}
	case Error:
		env.Body = &pb.Envelope_Error{Error: &pb.Error{Code: m.Code, Text: m.Text}}
	case HandOff:
		env.Body = &pb.Envelope_HandOff{HandOff: &pb.HandOff{State: m.State}}
	default:
		return nil, fmt.Errorf("wire: cannot encode %T", e.Msg)
	}
	return env, nil
}

// TransportError is an envelope with an Error and no addresses: the answer to
// a frame that did not decode.
func TransportError(code pb.Error_Code, text string) *pb.Envelope {
	return &pb.Envelope{Body: &pb.Envelope_Error{Error: &pb.Error{Code: code, Text: text}}}
}

// Decode converts an envelope back. Every error wraps [ErrMalformed].
func Decode(env *pb.Envelope) (Envelope, error) {
	if e, ok := env.Body.(*pb.Envelope_Error); ok && env.From == nil && env.To == nil {
		// A transport-level error answers a frame that did not decode, so it
		// cannot name addresses.
		return Envelope{Resource: env.Resource, Msg: Error{Code: e.Error.Code, Text: e.Error.Text}}, nil
	}
	from, err := decodeAddr(env.GetFrom())
	if err != nil {
		return Envelope{}, fmt.Errorf("from: %w", err)
	}
	to, err := decodeAddr(env.GetTo())
	if err != nil {
		return Envelope{}, fmt.Errorf("to: %w", err)
	}
	m, err := decodeBody(env)
	if err != nil {
		return Envelope{}, err
	}
	return Envelope{Resource: env.Resource, From: from, To: to, Msg: m}, nil
}

func duration(ns int64) (time.Duration, error) {
	if ns < 0 {
		return 0, malformed("negative duration %d", ns)
	}
	return time.Duration(ns), nil
}

func decodeBody(env *pb.Envelope) (core.Message, error) {
	switch b := env.Body.(type) {
	case *pb.Envelope_BackoffTry:
		lease, err := duration(b.BackoffTry.Lease)
		return backoff.Try{Round: b.BackoffTry.Round, Lease: lease}, err
	case *pb.Envelope_BackoffTryReply:
		held, err := duration(b.BackoffTryReply.Held)
		return backoff.TryReply{Round: b.BackoffTryReply.Round, Free: b.BackoffTryReply.Free, Held: held}, err
	case *pb.Envelope_BackoffRelease:
		return backoff.Release{Round: b.BackoffRelease.Round}, nil
	case *pb.Envelope_SigmaRequest:
		return sigma.Request{TS: b.SigmaRequest.Ts, Seq: b.SigmaRequest.Seq}, nil
	case *pb.Envelope_SigmaRenew:
		return sigma.Renew{TS: b.SigmaRenew.Ts, Seq: b.SigmaRenew.Seq}, nil
	case *pb.Envelope_SigmaYield:
		return sigma.Yield{TS: b.SigmaYield.Ts, Seq: b.SigmaYield.Seq}, nil
	case *pb.Envelope_SigmaRelease:
		return sigma.Release{TS: b.SigmaRelease.Ts}, nil
	case *pb.Envelope_SigmaResponse:
		r := b.SigmaResponse
		if r.Position < -1 || r.Position > math.MaxInt32 {
			return nil, malformed("queue position %d", r.Position)
		}
		hint, err1 := duration(r.WaitHint)
		left, err2 := duration(r.LeaseLeft)
		if err := errors.Join(err1, err2); err != nil {
			return nil, err
		}
		return sigma.Response{ClientTS: r.ClientTs, Seq: r.Seq, Owner: core.ClientID(r.Owner), OwnerTS: r.OwnerTs,
			Position: int(r.Position), WaitHint: hint, LeaseLeft: left, Clock: r.Clock,
			Incarnation: r.Incarnation, Version: r.Version}, nil
	case *pb.Envelope_OrderingSubmit:
		o, err := decodeOp(b.OrderingSubmit.Op)
		return ordering.Submit{Op: o}, err
	case *pb.Envelope_OrderingSubmitReply:
		id, err := decodeOpID(b.OrderingSubmitReply.Id)
		return ordering.SubmitReply{ID: id, Result: b.OrderingSubmitReply.Result}, err
	case *pb.Envelope_OrderingGet:
		return ordering.Get{Rank: decodeRank(b.OrderingGet.Rank)}, nil
	case *pb.Envelope_OrderingGetReply:
		r := b.OrderingGetReply
		committed, err := decodeSnapshot(r.Committed, true)
		if err != nil {
			return nil, err
		}
		proposed, err := decodeSnapshot(r.Proposed, false)
		if err != nil {
			return nil, err
		}
		pending, err := decodeOps(r.Pending)
		return ordering.GetReply{Rank: decodeRank(r.Rank), Committed: committed, Proposed: proposed,
			Proposer: decodeRank(r.Proposer), Pending: pending}, err
	case *pb.Envelope_OrderingPropose:
		s, err := decodeSnapshot(b.OrderingPropose.State, true)
		return ordering.Propose{Rank: decodeRank(b.OrderingPropose.Rank), State: s}, err
	case *pb.Envelope_OrderingCommit:
		s, err := decodeSnapshot(b.OrderingCommit.State, true)
		return ordering.Commit{Rank: decodeRank(b.OrderingCommit.Rank), State: s}, err
	case *pb.Envelope_OrderingAck:
		return ordering.Ack{Rank: decodeRank(b.OrderingAck.Rank), Version: b.OrderingAck.Version, Commit: b.OrderingAck.Commit}, nil
	case *pb.Envelope_OrderingRankException:
		return ordering.RankException{Rank: decodeRank(b.OrderingRankException.Rank), Max: decodeRank(b.OrderingRankException.Max)}, nil
	case *pb.Envelope_OrderingStateRequest:
		return ordering.StateRequest{}, nil
	case *pb.Envelope_OrderingStateReply:
		r := b.OrderingStateReply
		s, err := decodeSnapshot(r.Committed, !r.Recovering)
		return ordering.StateReply{Committed: s, MaxRank: decodeRank(r.MaxRank), Recovering: r.Recovering}, err
	case *pb.Envelope_Redirect:
		return Redirect{Key: b.Redirect.Key, Closer: b.Redirect.Closer}, nil
	case *pb.Envelope_Error:
		return Error{Code: b.Error.Code, Text: b.Error.Text}, nil
	case *pb.Envelope_HandOff:
		if b.HandOff.State == nil {
			return nil, malformed("hand-off without a state")
		}
		return HandOff{State: b.HandOff.State}, nil
	case nil:
		return nil, malformed("empty envelope (an unknown message type?)")
	default:
		return nil, malformed("unexpected body %T", b)
	}
}
