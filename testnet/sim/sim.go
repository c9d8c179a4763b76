package sim

import (
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/dhtsync/dhtsync/core"
)

type eventKind uint8

const (
	evDeliver eventKind = iota
	evTimer
	evCall
)

type event struct {
	at    core.Time
	seq   uint64
	kind  eventKind
	to    core.Addr
	from  core.Addr
	msg   core.Message
	timer core.Timer
	inc   uint64 // the incarnation of `to` that armed a timer
	call  func()
}

// Sim is the event loop. It is single-threaded and deterministic: given the same
// seed and the same calls, it produces the same trace.
type Sim struct {
	now     core.Time
	queue   eventQueue
	seq     uint64
	stopped bool

	net    Network
	netRng *rand.Rand
	seeder *rand.Rand // derives every other random source
	nodes  map[core.Addr]*simNode
	buf    []time.Duration
	fifo   map[[2]core.Addr]core.Time // Network.FIFO: last delivery per link

	// OnEvent receives every application event a node emits, after the node's
	// step has returned (so it may step nodes itself).
	OnEvent func(from core.Addr, e core.Event)
	// Trace, if set, receives one line per processed event.
	Trace io.Writer

	Stats Stats
}

// Stats counts what the simulator did.
type Stats struct {
	Sent, Delivered, Dropped, Duplicated uint64
	Events                               uint64
}

type simNode struct {
	addr core.Addr
	// base offsets the replica addresses of a client of resource r: its core
	// speaks of replicas 0..n-1, which are replicas base..base+n-1 of the run.
	base        int
	impl        core.Node
	down        bool
	incarnation uint64
	sink        nodeSink
	emitted     []core.Event
}

// nodeSink is the [core.Sink] the simulator hands to one node.
type nodeSink struct {
	s *Sim
	n *simNode
}

func (k nodeSink) Send(to core.Addr, m core.Message) {
	if to.IsReplica() {
		to.Replica += k.n.base
	}
	k.s.send(k.n.addr, to, m)
}
func (k nodeSink) SetTimer(at core.Time, t core.Timer) {
	k.s.push(event{at: max(at, k.s.now), kind: evTimer, to: k.n.addr, timer: t, inc: k.n.incarnation})
}
func (k nodeSink) Emit(e core.Event) { k.n.emitted = append(k.n.emitted, e) }

// New returns a simulator whose every random choice derives from seed.
func New(seed uint64, net Network) *Sim {
	seeder := rand.New(rand.NewPCG(seed, 0x64687473796e63)) // "dhtsync"
	s := &Sim{net: net, seeder: seeder, nodes: make(map[core.Addr]*simNode), fifo: make(map[[2]core.Addr]core.Time)}
	s.netRng = s.NewRand()
	return s
}

// NewRand returns a new random source derived from the seed. Call it in a fixed
// order (e.g. while building nodes) to keep runs reproducible.
func (s *Sim) NewRand() *rand.Rand {
	return rand.New(rand.NewPCG(s.seeder.Uint64(), s.seeder.Uint64()))
}

// Now is the current virtual time.
func (s *Sim) Now() core.Time { return s.now }

// Add registers node n at address a and starts it.
func (s *Sim) Add(a core.Addr, n core.Node) { s.AddClientOf(a, n, 0) }

// AddClientOf registers client node n of the resource whose replicas start at
// index base.
func (s *Sim) AddClientOf(a core.Addr, n core.Node, base int) {
	sn := &simNode{addr: a, impl: n, base: base}
	sn.sink = nodeSink{s, sn}
	s.nodes[a] = sn
	s.start(sn)
}

func (s *Sim) start(sn *simNode) {
	if st, ok := sn.impl.(core.Starter); ok {
		st.Start(s.now, sn.sink)
		s.dispatch(sn)
	}
}

// Node returns the node at a (nil if none).
func (s *Sim) Node(a core.Addr) core.Node {
	if sn := s.nodes[a]; sn != nil {
		return sn.impl
	}
	return nil
}

// Do runs f on the node at a with that node's sink, now, as if the application
// owning the node called it. Events f emits are dispatched afterwards.
func (s *Sim) Do(a core.Addr, f func(n core.Node, out core.Sink)) {
	sn := s.nodes[a]
	if sn == nil || sn.down {
		return
	}
	f(sn.impl, sn.sink)
	s.dispatch(sn)
}

// Crash stops the node at a: it receives nothing and its timers never fire.
func (s *Sim) Crash(a core.Addr) {
	if sn := s.nodes[a]; sn != nil {
		sn.down = true
		sn.incarnation++
		s.tracef("crash %v", a)
	}
}

// Replace swaps the node at a for n, a new incarnation: the old one's state and
// pending timers are gone (a replica reset, or a crashed client restarting).
func (s *Sim) Replace(a core.Addr, n core.Node) {
	sn := s.nodes[a]
	if sn == nil {
		s.Add(a, n)
		return
	}
	sn.impl, sn.down = n, false
	sn.incarnation++
	sn.emitted = sn.emitted[:0]
	s.tracef("replace %v", a)
	s.start(sn)
}

// At schedules f to run at time t (at once if t is in the past).
func (s *Sim) At(t core.Time, f func()) { s.push(event{at: max(t, s.now), kind: evCall, call: f}) }

// Stop ends Run after the current event.
func (s *Sim) Stop() { s.stopped = true }

// Run processes events until the queue is empty, Stop is called or virtual time
// would pass until. It returns the number of events processed.
func (s *Sim) Run(until core.Time) uint64 {
	var n uint64
	for !s.stopped && s.queue.Len() > 0 {
		if s.queue.Peek().at > until {
			s.now = until
			break
		}
		ev := s.queue.Pop()
		s.now = ev.at
		n++
		s.step(&ev)
	}
	s.Stats.Events += n
	return n
}

func (s *Sim) step(ev *event) {
	switch ev.kind {
	case evCall:
		s.tracef("call")
		ev.call()
	case evDeliver:
		sn := s.nodes[ev.to]
		if sn == nil || sn.down {
			s.Stats.Dropped++
			return
		}
		s.Stats.Delivered++
		if s.Trace != nil {
			s.tracef("recv %v->%v %T%+v", ev.from, ev.to, ev.msg, ev.msg)
		}
		from := ev.from
		if from.IsReplica() {
			from.Replica -= sn.base
		}
		sn.impl.Receive(s.now, from, ev.msg, sn.sink)
		s.dispatch(sn)
	case evTimer:
		sn := s.nodes[ev.to]
		if sn == nil || sn.down || sn.incarnation != ev.inc {
			return // the node crashed or was reset since it armed the timer
		}
		if s.Trace != nil {
			s.tracef("wake %v %+v", ev.to, ev.timer)
		}
		sn.impl.Wake(s.now, ev.timer, sn.sink)
		s.dispatch(sn)
	}
}

func (s *Sim) dispatch(sn *simNode) {
	for len(sn.emitted) > 0 {
		e := sn.emitted[0]
		sn.emitted = sn.emitted[1:]
		if s.Trace != nil {
			s.tracef("event %v %T%+v", sn.addr, e, e)
		}
		if s.OnEvent != nil {
			s.OnEvent(sn.addr, e)
		}
	}
	sn.emitted = sn.emitted[:0]
}

func (s *Sim) send(from, to core.Addr, m core.Message) {
	s.Stats.Sent++
	s.buf = s.net.deliveries(s.netRng, s.now, from, to, s.buf[:0])
	if len(s.buf) == 0 {
		s.Stats.Dropped++
		if s.Trace != nil {
			s.tracef("drop %v->%v %T%+v", from, to, m, m)
		}
		return
	}
	if len(s.buf) > 1 {
		s.Stats.Duplicated++
	}
	for _, d := range s.buf {
		at := s.now.Add(d)
		if s.net.FIFO {
			link := [2]core.Addr{from, to}
			at = max(at, s.fifo[link])
			s.fifo[link] = at
		}
		s.push(event{at: at, kind: evDeliver, to: to, from: from, msg: m})
	}
}

func (s *Sim) push(ev event) {
	s.seq++
	ev.seq = s.seq
	s.queue.Push(ev)
}

func (s *Sim) tracef(format string, args ...any) {
	if s.Trace == nil {
		return
	}
	fmt.Fprintf(s.Trace, "%d ", int64(s.now))
	fmt.Fprintf(s.Trace, format, args...)
	io.WriteString(s.Trace, "\n")
}
