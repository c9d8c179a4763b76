package ordering

import (
	"bytes"
	"errors"
	"slices"

	"github.com/dhtsync/dhtsync/core"
	"github.com/dhtsync/dhtsync/mutex"
	"github.com/dhtsync/dhtsync/quorum"
)

// Done is emitted when an operation the client submitted completes: Result is
// what b+1 replicas reported.
type Done struct {
	ID     OpID
	Result []byte
}

type phase uint8

const (
	idle phase = iota
	contending
	getting
	proposing
	committing
	waiting // between rounds
)

type submission struct {
	op      Op
	answers map[int][]byte
}

// Client submits operations and runs the ordering thread (Fig. 2).
type Client struct {
	cfg    Config
	quorum quorum.Threshold
	id     core.ClientID
	mutex  mutex.Client // contend(): liveness only

	seq   uint64
	subs  map[OpID]*submission
	order []OpID // submission order, for deterministic iteration

	phase     phase
	rank      Rank
	completed uint64
	round     uint64 // bumps at every phase, to ignore stale timers
	roundSeq  uint64 // seq when this ordering round began contending
	answered  map[int]bool
	gets      map[int]GetReply
	refusals  map[int]Rank
	acks      int
	proposal  *Snapshot
	fresh     bool // the proposal applies new operations (not a re-commit)
	mutexSink interceptSink
}

// NewClient returns an ordering client with identity id that contends through m.
func NewClient(cfg Config, id core.ClientID, m mutex.Client) (*Client, error) {
	cfg, q, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if id == "" || m == nil {
		return nil, errors.New("ordering: a client needs an id and a mutex client")
	}
	c := &Client{cfg: cfg, quorum: q, id: id, mutex: m, subs: map[OpID]*submission{}, rank: Rank{Client: id}}
	c.mutexSink.c = c
	return c, nil
}

// ID is the client's identity.
func (c *Client) ID() core.ClientID { return c.id }

// Submit submits an operation and returns its id; a Done event follows.
func (c *Client) Submit(now core.Time, body []byte, out core.Sink) OpID {
	c.seq++
	op := Op{ID: OpID{c.id, c.seq}, Body: body}
	c.subs[op.ID] = &submission{op: op, answers: map[int][]byte{}}
	c.order = append(c.order, op.ID)
	c.send(op, out)
	out.SetTimer(now.Add(c.cfg.PhaseTimeout), core.Timer{Kind: timerResend, Round: c.seq})
	if c.phase == idle {
		c.contend(now, out)
	}
	return op.ID
}

func (c *Client) send(op Op, out core.Sink) {
	for i := range c.cfg.N {
		if _, ok := c.subs[op.ID].answers[i]; !ok {
			out.Send(core.ReplicaAddr(i), Submit{Op: op})
		}
	}
}

// contend starts an ordering round (Fig. 2 line 9).
func (c *Client) contend(now core.Time, out core.Sink) {
	c.phase = contending
	c.round++
	c.roundSeq = c.seq
	c.mutexSink.out, c.mutexSink.now = out, now
	if err := c.mutex.Acquire(now, 0, &c.mutexSink); err != nil {
		c.mutex.Release(now, &c.mutexSink)
		_ = c.mutex.Acquire(now, 0, &c.mutexSink)
	}
}

// interceptSink passes the mutex core's outputs through and turns its
// Acquired event into the start of the get phase.
type interceptSink struct {
	c   *Client
	out core.Sink
	now core.Time
}

func (s *interceptSink) Send(to core.Addr, m core.Message)   { s.out.Send(to, m) }
func (s *interceptSink) SetTimer(at core.Time, t core.Timer) { s.out.SetTimer(at, t) }
func (s *interceptSink) Emit(e core.Event) {
	if _, ok := e.(mutex.Acquired); !ok {
		return
	}
	switch {
	case s.c.phase == contending && len(s.c.subs) > 0:
		s.c.startPhase(s.now, getting, s.out)
	default: // nothing left to order (another client's round did it): let go
		s.c.endRound(s.now, s.out)
	}
}

// startPhase sends the phase's request to every replica.
func (c *Client) startPhase(now core.Time, p phase, out core.Sink) {
	c.phase = p
	c.round++
	c.answered, c.refusals, c.acks = map[int]bool{}, map[int]Rank{}, 0
	var m core.Message
	switch p {
	case getting:
		c.rank.N++ // a Get needs a rank above any the replicas saw
		c.gets = map[int]GetReply{}
		m = Get{Rank: c.rank}
	case proposing:
		m = Propose{Rank: c.rank, State: c.proposal}
	case committing:
		m = Commit{Rank: c.rank, State: c.proposal}
	}
	for i := range c.cfg.N {
		out.Send(core.ReplicaAddr(i), m)
	}
	out.SetTimer(now.Add(c.cfg.PhaseTimeout), core.Timer{Kind: timerPhase, Round: c.round})
}

// Receive implements core.Node.
func (c *Client) Receive(now core.Time, from core.Addr, m core.Message, out core.Sink) {
	if !IsOrdering(m) {
		c.mutexSink.out, c.mutexSink.now = out, now
		c.mutex.Receive(now, from, m, &c.mutexSink)
		return
	}
	i := from.Replica
	if i < 0 || i >= c.cfg.N {
		return
	}
	switch m := m.(type) {
	case SubmitReply:
		c.answer(now, i, m, out)
	case GetReply:
		if c.phase == getting && m.Rank == c.rank && m.Committed != nil && !c.answered[i] {
			c.answered[i] = true
			c.gets[i] = m
			if c.quorum.IsQuorum(len(c.gets)) {
				c.decide(now, out)
			}
		}
	case Ack:
		want := (c.phase == proposing && !m.Commit) || (c.phase == committing && m.Commit)
		if want && m.Rank == c.rank && c.proposal != nil && m.Version == c.proposal.Version && !c.answered[i] {
			c.answered[i] = true
			c.acks++
			if c.quorum.IsQuorum(c.acks) {
				c.phaseDone(now, out)
			}
		}
	case RankException:
		if m.Rank != c.rank || c.answered[i] || (c.phase != getting && c.phase != proposing && c.phase != committing) {
			return
		}
		c.answered[i] = true
		c.refusals[i] = m.Max
		if len(c.refusals) > c.cfg.B {
			// b+1 replicas, one of them correct, saw a higher rank: abort, and
			// come back above the highest reported.
			for _, r := range c.refusals {
				c.rank.N = max(c.rank.N, r.N)
			}
			c.abort(now, out)
		}
	}
}

// answer records a replica's result for a submission; b+1 equal ones complete it.
func (c *Client) answer(now core.Time, i int, m SubmitReply, out core.Sink) {
	sub := c.subs[m.ID]
	if sub == nil {
		return
	}
	sub.answers[i] = m.Result
	same := 0
	for _, r := range sub.answers {
		if bytes.Equal(r, m.Result) {
			same++
		}
	}
	if same <= c.cfg.B {
		return
	}
	delete(c.subs, m.ID)
	c.order = slices.DeleteFunc(c.order, func(id OpID) bool { return id == m.ID })
	if len(c.subs) == 0 && (c.phase == contending || c.phase == waiting) {
		c.endRound(now, out) // another client's round committed it: stop contending
	}
	out.Emit(Done{ID: m.ID, Result: m.Result})
}

// decide is Fig. 2 lines 14–25: choose the state to propose.
func (c *Client) decide(now core.Time, out core.Sink) {
	b := c.cfg.B
	// σc: the newest committed state that b+1 replicas report.
	count := map[Digest]int{}
	for _, g := range c.gets {
		count[g.Committed.Digest()]++
	}
	var sc *Snapshot
	for _, i := range sortedKeys(c.gets) {
		g := c.gets[i]
		if count[g.Committed.Digest()] > b && (sc == nil || g.Committed.Version > sc.Version) {
			sc = g.Committed
		}
	}
	spc := c.choose()
	// completed: if b+1 replicas report proposals above v, v is committed at a
	// full quorum.
	var versions []uint64
	for _, g := range c.gets {
		if g.Proposed != nil {
			versions = append(versions, g.Proposed.Version)
		}
	}
	slices.SortFunc(versions, func(x, y uint64) int { return int(int64(y) - int64(x)) })
	if len(versions) > b && versions[b] > 0 {
		c.completed = max(c.completed, versions[b]-1)
	}
	c.fresh = false
	switch {
	case sc != nil && sc.Version > c.completed:
		c.proposal = sc
	case spc != nil && spc.Version > c.completed:
		c.proposal = spc
	case sc != nil:
		c.proposal = Derive(c.cfg.Object, sc, c.agreedPending(), c.cfg.KeepVersions)
		c.fresh = true
	default:
		c.proposal = nil
	}
	if c.proposal == nil {
		// Nothing to (re)commit and nothing pending at b+1 replicas yet: our
		// submissions are still on their way. Try again a little later.
		c.pause(now, out)
		return
	}
	c.startPhase(now, proposing, out)
}

// choose is Fig. 2 lines 33–48: among the proposed states, by descending
// (version, proposer), the first that b+1 replicas report.
func (c *Client) choose() *Snapshot {
	type vote struct {
		s        *Snapshot
		proposer Rank
	}
	var votes []vote
	for _, i := range sortedKeys(c.gets) {
		if g := c.gets[i]; g.Proposed != nil {
			votes = append(votes, vote{g.Proposed, g.Proposer})
		}
	}
	slices.SortStableFunc(votes, func(a, b vote) int {
		if a.s.Version != b.s.Version {
			return int(int64(b.s.Version) - int64(a.s.Version))
		}
		return b.proposer.Compare(a.proposer)
	})
	count := map[Digest]int{}
	for _, v := range votes {
		count[v.s.Digest()]++
		if count[v.s.Digest()] > c.cfg.B {
			return v.s
		}
	}
	return nil
}

// agreedPending is Fig. 2 line 24: the operations b+1 replicas report pending.
func (c *Client) agreedPending() []Op {
	type key struct {
		id   OpID
		body string
	}
	count := map[key]int{}
	var ops []Op
	for _, i := range sortedKeys(c.gets) {
		for _, op := range c.gets[i].Pending {
			k := key{op.ID, string(op.Body)}
			count[k]++
			if count[k] == c.cfg.B+1 {
				ops = append(ops, op)
			}
		}
	}
	return ops
}

func (c *Client) phaseDone(now core.Time, out core.Sink) {
	if c.phase == proposing {
		c.startPhase(now, committing, out)
		return
	}
	c.completed = max(c.completed, c.proposal.Version)
	switch {
	case len(c.subs) == 0:
		c.endRound(now, out)
	case c.fresh && c.oldestOpen() <= c.roundSeq:
		// Our operations may have been left out (a gap, or not yet pending at
		// b+1); their answers are on their way if not.
		c.pause(now, out)
	case c.fresh:
		// What is open was submitted during this round, so it could not be in
		// it: go again at once rather than wait.
		c.endRound(now, out)
		c.contend(now, out)
	default:
		c.endRound(now, out)
		c.contend(now, out) // we only finished someone else's state
	}
}

// oldestOpen is the lowest sequence number of an unanswered submission.
func (c *Client) oldestOpen() uint64 {
	oldest := c.seq + 1
	for id := range c.subs {
		oldest = min(oldest, id.Seq)
	}
	return oldest
}

// abort gives up the round (a rank exception or a timeout) and retries.
func (c *Client) abort(now core.Time, out core.Sink) { c.pause(now, out) }

func (c *Client) endRound(now core.Time, out core.Sink) {
	c.mutexSink.out = out
	c.mutex.Release(now, &c.mutexSink)
	c.phase = idle
	c.round++
}

// pause waits a phase timeout before contending again, if there is work.
func (c *Client) pause(now core.Time, out core.Sink) {
	c.endRound(now, out)
	if len(c.subs) == 0 {
		return
	}
	c.phase = waiting
	out.SetTimer(now.Add(c.cfg.PhaseTimeout/2), core.Timer{Kind: timerRetry, Round: c.round})
}

// Wake implements core.Node.
func (c *Client) Wake(now core.Time, t core.Timer, out core.Sink) {
	if t.Kind < timerRecover {
		c.mutexSink.out, c.mutexSink.now = out, now
		c.mutex.Wake(now, t, &c.mutexSink)
		return
	}
	switch t.Kind {
	case timerResend:
		id := OpID{c.id, t.Round}
		if sub := c.subs[id]; sub != nil {
			c.send(sub.op, out)
			out.SetTimer(now.Add(c.cfg.PhaseTimeout), t)
			if c.phase == idle {
				c.contend(now, out)
			}
		}
	case timerPhase:
		if t.Round == c.round && (c.phase == getting || c.phase == proposing || c.phase == committing) {
			c.abort(now, out)
		}
	case timerRetry:
		if t.Round != c.round || c.phase != waiting {
			return
		}
		c.phase = idle
		if len(c.subs) > 0 {
			c.contend(now, out)
		}
	}
}

func sortedKeys[V any](m map[int]V) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
