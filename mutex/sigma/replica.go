package sigma

import (
	"time"

	"github.com/dhtsync/dhtsync/core"
	"github.com/dhtsync/dhtsync/mutex"
)

const (
	timerLease uint8 = 1 // replica: the owner's lease may have run out
	timerGrace uint8 = 2 // replica: the grace period is over
)

// request is a client's request as a replica knows it.
type request struct {
	client core.ClientID
	ts     uint64
}

// owner is the request holding the vote, with the highest Seq of its messages
// seen, to recognize a Yield overtaken by a later message.
type owner struct {
	request
	lastSeq uint64
}

// Replica is one logical replica of a Sigma resource.
type Replica struct {
	cfg         Config
	incarnation uint64
	version     uint64

	owner       owner // client "" when there is none
	expiry      core.Time
	ownerSince  core.Time
	leaseArmed  bool
	graceUntil  core.Time
	queue       waitQueue
	meanCS      time.Duration
	lastRelease core.Time
	released    bool // lastRelease is set
	clock       uint64
	finished    mutex.Finished // released requests, to ignore their late copies
}

// NewReplica returns a replica in a fresh incarnation that starts at now. With
// cfg.Grace it grants nothing until now+Lease.
func NewReplica(cfg Config, incarnation uint64, now core.Time) (*Replica, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	r := &Replica{cfg: cfg, incarnation: incarnation, meanCS: cfg.InitialCS, graceUntil: now,
		finished: mutex.Finished{Max: cfg.MaxQueue}}
	if cfg.Grace {
		r.graceUntil = now.Add(cfg.Lease)
	}
	return r, nil
}

// Start implements [core.Starter]: it arms the end of the grace period, and the
// lease of an owner carried over by [RestoreReplica].
func (r *Replica) Start(now core.Time, out core.Sink) {
	if r.graceUntil > now {
		out.SetTimer(r.graceUntil, core.Timer{Kind: timerGrace})
	}
	if r.owner.client != "" {
		r.armLease(out)
	}
}

// Incarnation is the id of this hosting period.
func (r *Replica) Incarnation() uint64 { return r.incarnation }

// Receive implements [core.Node].
func (r *Replica) Receive(now core.Time, from core.Addr, m core.Message, out core.Sink) {
	if from.IsReplica() || from.Client == "" {
		return
	}
	c := from.Client
	switch m := m.(type) {
	case Request:
		r.request(now, request{c, m.TS}, m.Seq, out)
	case Renew:
		if r.owner.request == (request{c, m.TS}) {
			r.owner.lastSeq = max(r.owner.lastSeq, m.Seq)
			r.expiry = now.Add(r.cfg.Lease)
			r.armLease(out)
		}
		r.respond(now, request{c, m.TS}, m.Seq, out)
	case Yield:
		req := request{c, m.TS}
		if r.owner.request == req && m.Seq > r.owner.lastSeq {
			r.owner = owner{}
			r.enqueue(req)
			r.promote(now, out, c)
		}
		r.respond(now, req, m.Seq, out) // the yielder learns where it stands now
	case Release:
		req := request{c, m.TS}
		r.finished.Done(now, c, m.TS)
		if r.owner.request == req {
			r.observeRelease(now)
			r.owner = owner{}
			r.promote(now, out, "")
			return
		}
		r.queue.RemoveRequest(req)
	}
}

func (r *Replica) request(now core.Time, req request, seq uint64, out core.Sink) {
	if r.finished.Stale(req.client, req.ts) {
		return // a late copy of a request its client already released
	}
	r.clock = max(r.clock, req.ts)
	r.promote(now, out, "") // an earlier queued request goes first
	switch {
	case r.owner.client == req.client:
		// The owner asks again: a retry of the same request, or a new request whose
		// release of the previous one was lost. Either way it keeps the vote.
		if r.owner.ts != req.ts {
			r.grant(now, req, out)
		}
		r.owner.lastSeq = max(r.owner.lastSeq, seq)
	case r.owner.client == "" && now >= r.graceUntil:
		r.queue.Remove(req.client)
		r.grant(now, req, out)
		r.owner.lastSeq = seq
	default:
		r.enqueue(req) // a newer request replaces an older one
	}
	r.respond(now, req, seq, out)
}

func (r *Replica) grant(now core.Time, req request, out core.Sink) {
	r.owner, r.ownerSince, r.expiry = owner{request: req}, now, now.Add(r.cfg.Lease)
	r.armLease(out)
}

func (r *Replica) armLease(out core.Sink) {
	if !r.leaseArmed {
		r.leaseArmed = true
		out.SetTimer(r.expiry, core.Timer{Kind: timerLease})
	}
}

// promote makes the earliest queued request owner and notifies it, unless it is
// client quiet, who is answered by the caller.
func (r *Replica) promote(now core.Time, out core.Sink, quiet core.ClientID) {
	if r.owner.client != "" || now < r.graceUntil {
		return
	}
	head, ok := r.queue.PopHead()
	if !ok {
		return
	}
	r.grant(now, head, out)
	if head.client != quiet {
		r.respond(now, head, 0, out)
	}
}

// Wake implements [core.Node].
func (r *Replica) Wake(now core.Time, t core.Timer, out core.Sink) {
	switch t.Kind {
	case timerLease:
		r.leaseArmed = false
		switch {
		case r.owner.client == "":
		case now < r.expiry:
			r.armLease(out) // renewed since the timer was armed
		default:
			r.owner = owner{} // expired: a crashed or cut-off holder
			r.promote(now, out, "")
		}
	case timerGrace:
		r.promote(now, out, "")
	}
}

// enqueue queues req unless the queue is full (the client then learns no
// position and asks again after its wait).
func (r *Replica) enqueue(req request) {
	if _, queued := r.queue.ts[req.client]; queued || r.queue.Len() < r.cfg.MaxQueue {
		r.queue.Insert(req)
	}
}

// observeRelease updates the mean CS time, an exponentially weighted mean (1/8)
// of the intervals between consecutive releases.
func (r *Replica) observeRelease(now core.Time) {
	if r.released {
		sample := now.Sub(r.lastRelease)
		r.meanCS += (sample - r.meanCS) / 8
	}
	r.lastRelease, r.released = now, true
}

func (r *Replica) respond(now core.Time, to request, seq uint64, out core.Sink) {
	r.version++
	resp := Response{ClientTS: to.ts, Seq: seq, Owner: r.owner.client, OwnerTS: r.owner.ts,
		Position: -1, Clock: r.clock, Incarnation: r.incarnation, Version: r.version}
	switch {
	case r.owner.request == to:
		resp.Position, resp.LeaseLeft = 0, r.expiry.Sub(now)
	default:
		if i := r.queue.Position(to); i > 0 {
			resp.Position = i
		}
	}
	if resp.Position != 0 {
		// Informed backoff: ask again when the requests ahead should be done.
		ahead := time.Duration(max(resp.Position, 1))
		resp.WaitHint = max(ahead*r.meanCS, r.graceUntil.Sub(now))
	}
	out.Send(core.ClientAddr(to.client), resp)
}
