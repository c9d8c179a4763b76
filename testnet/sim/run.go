package sim

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/dhtsync/dhtsync/core"
	"github.com/dhtsync/dhtsync/mutex"
	"github.com/dhtsync/dhtsync/testnet/oracle"
)

// Arrivals says when clients ask for the lock.
type Arrivals uint8

const (
	// Simultaneous: every client asks at time 0 (the paper's t contenders), and
	// asks again right after each release until it has made PerClient requests.
	Simultaneous Arrivals = iota
	// Poisson: Requests requests arrive at rate Rate, each at a client drawn
	// uniformly; a client serves its requests one after the other.
	Poisson
	// Spaced: Requests requests arrive one every 1/Rate seconds, at the clients
	// in turn: with a wide enough spacing nobody ever contends, which is how the
	// contention-free costs of the textbook formulas are measured.
	Spaced
)

// Workload is what the application asks of the mutex.
type Workload struct {
	Clients   int
	Arrivals  Arrivals
	PerClient int     // Simultaneous: acquisitions per client (0: 1)
	Rate      float64 // Poisson, Spaced: requests per virtual second
	Requests  int     // Poisson, Spaced: requests in all
	// PickIdle sends each Poisson request to an idle client when there is one,
	// approximating the papers' infinite pool of clients.
	PickIdle bool
	// Hold is the length of a critical section; nil means the whole lease. A
	// section never outlasts its lease.
	Hold Dist
	// Lease draws the lease asked for at each acquisition (nil: the protocol's
	// default).
	Lease Dist
	// CrashProb is the probability that a client crashes inside a critical section.
	CrashProb float64
	// StartAt delays the first request (to let, say, a grace period pass).
	StartAt time.Duration
}

// Faults are the replica faults of a run.
type Faults struct {
	// Byzantine replicas (the lowest indices) behave as Behaviour.
	Byzantine int
	Behaviour Behaviour
	// SlowBy is how late a Slow replica answers (0: 10× the mean network delay).
	SlowBy time.Duration
	// ResetLifetime is the mean of the exponentially distributed lifetime of a
	// correct replica's incarnation; at its end the replica loses its state. 0: no
	// resets.
	ResetLifetime time.Duration
	// Fail, if set, fails one participant once.
	Fail *Failure
	// ResetPerCS is the probability that each correct replica resets during each
	// critical section, at a time uniform in the section's first tenth (the
	// papers' model: a replica that voted resets while its vote is in use).
	ResetPerCS float64
}

// Failure is one participant failing at a given time: replica Replica of the
// first resource, or else client Client; it crashes for good, or with Reset it
// loses its state and goes on (a client's application then asks again for the
// request it was serving).
type Failure struct {
	At      core.Time
	Replica int // -1: a client fails
	Client  int
	Reset   bool
}

// Scenario is one complete simulated experiment.
type Scenario struct {
	Name     string
	Protocol Protocol
	// Resources is the number of independent resources (0: 1), each with its own
	// Protocol.Replicas() replicas; client k uses resource k mod Resources.
	Resources int
	Net       Network
	Faults    Faults
	Workload  Workload
	// MaxTime bounds virtual time (0: one hour); a run that reaches it is
	// reported as not Completed.
	MaxTime time.Duration
}

// Metrics summarizes one run.
type Metrics struct {
	Scenario, Protocol string
	Seed               uint64

	Requests, Entries, Crashes int
	// Overlaps counts critical sections that began inside another client's.
	Overlaps     int
	FirstOverlap string
	Completed    bool   // every request was served (or lost with its crashed client)
	Error        string // a client core refused what the workload asked

	Messages       uint64
	Rounds         int
	MsgsPerEntry   float64
	RoundsPerEntry float64

	ResponseMean, ResponseP50, ResponseP99, ResponseMax time.Duration
	// Usable lease: how much of its lease a client had left on entering.
	UsableMin, UsableMean time.Duration
	// ResponseByClient is each client's mean response time.
	ResponseByClient map[string]time.Duration
	End              core.Time
	Throughput       float64 // entries per virtual second

	// EntryTimes are the times of the critical-section entries, in order.
	EntryTimes []core.Time
	// HandoffMean is the mean time from a section's exit to the next entry, over
	// the entries that followed an exit with nobody inside: under saturation,
	// the synchronization delay.
	HandoffMean time.Duration
	// ResetVoters counts, for ResetPerCS runs, the critical sections by how many
	// of their voters reset during them: ResetVoters[k] sections lost k voters.
	ResetVoters []int
	// LongestCrashBlock is the longest time from a holder's crash to the next
	// entry of any client.
	LongestCrashBlock time.Duration

	Events uint64
	Wall   time.Duration
}

// Run executes scenario sc with seed and checks it with the oracle. trace, if not
// nil, receives the full event trace.
func Run(seed uint64, sc Scenario, trace io.Writer) (Metrics, error) {
	if err := sc.validate(); err != nil {
		return Metrics{}, err
	}
	start := time.Now()
	s := New(seed, sc.Net)
	s.Trace = trace
	if err := addReplicas(s, sc); err != nil {
		return Metrics{}, err
	}
	d, err := newDriver(s, sc)
	if err != nil {
		return Metrics{}, err
	}
	s.OnEvent = d.onEvent
	d.start()
	d.scheduleFailure()
	maxTime := sc.MaxTime
	if maxTime == 0 {
		maxTime = time.Hour
	}
	s.Run(core.Time(maxTime))
	m := d.metrics(seed)
	m.Events, m.Wall = s.Stats.Events, time.Since(start)
	m.Messages = s.Stats.Sent
	if m.Entries > 0 {
		m.MsgsPerEntry = float64(m.Messages) / float64(m.Entries)
		m.RoundsPerEntry = float64(m.Rounds) / float64(m.Entries)
	}
	return m, nil
}

func (sc Scenario) validate() error {
	w := sc.Workload
	switch {
	case sc.Protocol == nil:
		return errors.New("sim: scenario has no protocol")
	case w.Clients < 1:
		return fmt.Errorf("sim: need at least one client, got %d", w.Clients)
	case w.Arrivals != Simultaneous && (w.Rate <= 0 || w.Requests < 1):
		return fmt.Errorf("sim: Poisson and spaced arrivals need a positive rate and requests (rate %v, requests %d)", w.Rate, w.Requests)
	case w.CrashProb < 0 || w.CrashProb > 1 || sc.Net.Loss < 0 || sc.Net.Loss > 1 || sc.Net.Duplicate < 0 || sc.Net.Duplicate > 1:
		return errors.New("sim: probabilities must lie in [0, 1]")
	case sc.Faults.Byzantine < 0 || sc.Faults.Byzantine > sc.Protocol.Replicas():
		return fmt.Errorf("sim: %d Byzantine replicas out of %d", sc.Faults.Byzantine, sc.Protocol.Replicas())
	case sc.Faults.Byzantine > 0 && sc.Faults.Behaviour == "":
		return errors.New("sim: Byzantine replicas need a behaviour")
	case sc.Faults.ResetPerCS < 0 || sc.Faults.ResetPerCS > 1:
		return errors.New("sim: ResetPerCS is a probability")
	case sc.Faults.Fail != nil && (sc.Faults.Fail.Replica >= sc.Protocol.Replicas() ||
		sc.Faults.Fail.Replica < 0 && (sc.Faults.Fail.Client < 0 || sc.Faults.Fail.Client >= w.Clients)):
		return errors.New("sim: the failing participant does not exist")
	case sc.Resources < 0:
		return errors.New("sim: Resources cannot be negative")
	case sc.Faults.ResetLifetime < 0 || sc.MaxTime < 0:
		return errors.New("sim: durations cannot be negative")
	}
	return nil
}

func (sc Scenario) resources() int { return max(sc.Resources, 1) }

func addReplicas(s *Sim, sc Scenario) error {
	p, f := sc.Protocol, sc.Faults
	n := p.Replicas()
	for j := range sc.resources() * n {
		i := j % n // index within the resource
		addr := core.ReplicaAddr(j)
		var node core.Node
		var err error
		switch {
		case i >= f.Byzantine:
			rng := s.NewRand()
			node, err = p.NewReplica(i, 0, rng)
			if err == nil && f.ResetLifetime > 0 {
				scheduleResets(s, addr, f.ResetLifetime, rng, func() (core.Node, error) { return p.NewReplica(i, s.Now(), rng) })
			}
		case f.Behaviour == Slow:
			by := f.SlowBy
			if by == 0 && sc.Net.Delay != nil {
				by = 10 * sc.Net.Delay.Mean()
			}
			node, err = p.NewReplica(i, 0, s.NewRand())
			node = newSlowNode(node, by)
		default:
			node, err = p.Liar(i, f.Behaviour, s.NewRand())
		}
		if err != nil {
			return err
		}
		s.Add(addr, node)
	}
	return nil
}

// scheduleResets replaces the node at addr with fresh() at the end of each
// exponentially distributed lifetime of the given mean: a replica reset.
func scheduleResets(s *Sim, addr core.Addr, mean time.Duration, rng *rand.Rand, fresh func() (core.Node, error)) {
	var next func()
	next = func() {
		at := s.Now().Add(time.Duration(rng.ExpFloat64() * float64(mean)))
		s.At(at, func() {
			if node, err := fresh(); err == nil {
				s.Replace(addr, node)
			}
			next()
		})
	}
	next()
}

// ClientName is the id of the i-th client of a run.
func ClientName(i int) core.ClientID { return core.ClientID(fmt.Sprintf("c%04d", i)) }

// driver plays the application on every client and feeds the oracle.
type driver struct {
	s       *Sim
	sc      Scenario
	rng     *rand.Rand
	oracles []*oracle.Oracle // one per resource
	clients map[core.Addr]*appClient
	order   []*appClient
	idle    []*appClient // PickIdle: clients with nothing to do

	arrived, finished int // requests arrived; requests served or lost
	allArrived        bool
	entries, crashes  int
	rounds            int
	responses         []time.Duration
	usableSum         time.Duration
	usableMin         time.Duration
	lastExit          core.Time
	entryTimes        []core.Time
	crashedAt         core.Time // the last holder crash not yet followed by an entry
	crashPending      bool
	crashBlock        time.Duration
	resetVoters       []int
	handoffSum        time.Duration
	handoffs          int
	inside            int // clients inside now
	err               error
}

type appClient struct {
	addr    core.Addr
	core    mutex.Client
	waiting []core.Time // arrival times of requests not yet served
	busy    bool        // contending or inside
	crashed bool
	seq     uint64 // bumps at every (re)scheduled exit, to ignore stale ones
	res     int    // the resource it uses
	inside  bool
	until   core.Time // lease end
	holdEnd core.Time // when the application wants to leave
	again   int       // Simultaneous: requests still to make after this one

	entries      int
	responseTime time.Duration
}

func newDriver(s *Sim, sc Scenario) (*driver, error) {
	d := &driver{s: s, sc: sc, rng: s.NewRand(), clients: make(map[core.Addr]*appClient)}
	for range sc.resources() {
		d.oracles = append(d.oracles, oracle.New())
	}
	for i := range sc.Workload.Clients {
		id := ClientName(i)
		c, err := sc.Protocol.NewClient(id, s.NewRand())
		if err != nil {
			return nil, err
		}
		ac := &appClient{addr: core.ClientAddr(id), core: c, res: i % sc.resources()}
		s.AddClientOf(ac.addr, c, ac.res*sc.Protocol.Replicas())
		d.clients[ac.addr] = ac
		d.order = append(d.order, ac)
	}
	return d, nil
}

func (d *driver) start() {
	w := d.sc.Workload
	if w.Arrivals == Simultaneous {
		d.s.At(core.Time(w.StartAt), func() {
			for _, c := range d.order {
				c.again = max(w.PerClient, 1) - 1
				d.arrive(c)
			}
			d.allArrived = true
			d.checkDone()
		})
		return
	}
	d.idle = append(d.idle, d.order...)
	var next func()
	next = func() {
		if w.Arrivals == Spaced {
			d.arrive(d.order[d.arrived%len(d.order)])
		} else {
			d.arrive(d.pick())
		}
		if d.arrived == w.Requests {
			d.allArrived = true
			d.checkDone()
			return
		}
		gap := 1 / w.Rate
		if w.Arrivals == Poisson {
			gap *= d.rng.ExpFloat64()
		}
		d.s.At(d.s.Now().Add(time.Duration(gap*float64(time.Second))), next)
	}
	d.s.At(core.Time(w.StartAt), next)
}

// scheduleFailure arranges the scenario's Failure, if any.
func (d *driver) scheduleFailure() {
	f := d.sc.Faults.Fail
	if f == nil {
		return
	}
	d.s.At(f.At, func() {
		switch {
		case f.Replica >= 0 && f.Reset:
			if node, err := d.sc.Protocol.NewReplica(f.Replica, d.s.Now(), d.rng); err == nil {
				d.s.Replace(core.ReplicaAddr(f.Replica), node)
			}
		case f.Replica >= 0:
			d.s.Crash(core.ReplicaAddr(f.Replica))
		case f.Reset:
			d.resetClient(d.order[f.Client])
		default:
			if c := d.order[f.Client]; !c.crashed {
				d.crash(c)
			}
		}
	})
}

// resetClient gives client c a fresh core: it forgets everything, leaves the
// section if it was inside, and its application asks again.
func (d *driver) resetClient(c *appClient) {
	fresh, err := d.sc.Protocol.NewClient(c.addr.Client, d.s.NewRand())
	if err != nil || c.crashed {
		return
	}
	if c.inside {
		c.inside = false
		d.inside--
		_ = d.oracles[c.res].Exit(string(c.addr.Client), d.s.Now())
		d.lastExit = d.s.Now()
	}
	c.seq++ // void its scheduled exit
	c.core, c.busy = fresh, false
	d.s.Replace(c.addr, fresh)
	if len(c.waiting) > 0 {
		d.acquire(c)
	}
}

// pick chooses the client of a Poisson arrival.
func (d *driver) pick() *appClient {
	if !d.sc.Workload.PickIdle || len(d.idle) == 0 {
		return d.order[d.rng.IntN(len(d.order))]
	}
	i := d.rng.IntN(len(d.idle))
	c := d.idle[i]
	d.idle[i] = d.idle[len(d.idle)-1]
	d.idle = d.idle[:len(d.idle)-1]
	return c
}

func (d *driver) arrive(c *appClient) {
	d.arrived++
	if c.crashed {
		d.finished++
		return
	}
	c.waiting = append(c.waiting, d.s.Now())
	if !c.busy {
		d.acquire(c)
	}
}

func (d *driver) acquire(c *appClient) {
	c.busy = true
	d.s.Do(c.addr, func(_ core.Node, out core.Sink) {
		var lease time.Duration
		if l := d.sc.Workload.Lease; l != nil {
			lease = l.Sample(d.rng)
		}
		if err := c.core.Acquire(d.s.Now(), lease, out); err != nil && d.err == nil {
			d.err = err
		}
	})
}

func (d *driver) onEvent(from core.Addr, e core.Event) {
	c := d.clients[from]
	if c == nil || c.crashed || len(c.waiting) == 0 {
		return
	}
	switch e := e.(type) {
	case mutex.Acquired:
		d.entered(c, e)
	case mutex.Extended:
		// A renewal moved the lease end: a section cut short by it may go on.
		if c.inside && c.holdEnd > c.until {
			c.until = e.Until
			d.scheduleExit(c)
		}
	}
}

func (d *driver) entered(c *appClient, a mutex.Acquired) {
	now := d.s.Now()
	d.entries++
	d.entryTimes = append(d.entryTimes, now)
	if d.inside == 0 && d.lastExit > 0 {
		d.handoffSum += now.Sub(d.lastExit)
		d.handoffs++
	}
	d.inside++
	if d.crashPending {
		d.crashBlock = max(d.crashBlock, now.Sub(d.crashedAt))
		d.crashPending = false
	}
	d.rounds += a.Rounds
	d.responses = append(d.responses, now.Sub(c.waiting[0]))
	c.entries++
	c.responseTime += now.Sub(c.waiting[0])
	usable := a.Until.Sub(now)
	d.usableSum += usable
	if d.entries == 1 || usable < d.usableMin {
		d.usableMin = usable
	}
	if err := d.oracles[c.res].Enter(string(c.addr.Client), now); err != nil && d.err == nil {
		d.err = err
	}
	c.inside, c.until, c.holdEnd = true, a.Until, a.Until
	if h := d.sc.Workload.Hold; h != nil {
		c.holdEnd = now.Add(h.Sample(d.rng))
	}
	d.resetDuringCS(now, min(c.holdEnd, c.until), c.res, a.Voters)
	if p := d.sc.Workload.CrashProb; p > 0 && d.rng.Float64() < p {
		end := min(c.holdEnd, c.until)
		crashAt := now.Add(time.Duration(d.rng.Float64() * float64(end.Sub(now))))
		c.seq++
		d.s.At(crashAt, func() { d.crash(c) })
		return
	}
	d.scheduleExit(c)
}

// resetDuringCS resets each correct replica with probability ResetPerCS at a
// time in the first tenth of the section [now, end), and counts how many of the
// section's voters it reset.
func (d *driver) resetDuringCS(now, end core.Time, res int, voters []int) {
	p := d.sc.Faults.ResetPerCS
	if p == 0 {
		return
	}
	lost := 0
	for i := d.sc.Faults.Byzantine; i < d.sc.Protocol.Replicas(); i++ {
		if d.rng.Float64() >= p {
			continue
		}
		if slices.Contains(voters, i) {
			lost++
		}
		at := now.Add(time.Duration(d.rng.Float64() * float64(end.Sub(now)) / 10))
		d.s.At(at, func() {
			if node, err := d.sc.Protocol.NewReplica(i, d.s.Now(), d.rng); err == nil {
				d.s.Replace(core.ReplicaAddr(res*d.sc.Protocol.Replicas()+i), node)
			}
		})
	}
	for len(d.resetVoters) <= lost {
		d.resetVoters = append(d.resetVoters, 0)
	}
	d.resetVoters[lost]++
}

// scheduleExit leaves the section at the end of the hold or of the lease,
// whichever is first; an earlier scheduled exit is void.
func (d *driver) scheduleExit(c *appClient) {
	c.seq++
	seq := c.seq
	d.s.At(min(c.holdEnd, c.until), func() {
		if c.seq == seq && c.inside && !c.crashed {
			d.exit(c)
		}
	})
}

func (d *driver) exit(c *appClient) {
	now := d.s.Now()
	c.inside = false
	d.inside--
	_ = d.oracles[c.res].Exit(string(c.addr.Client), now)
	d.lastExit = now
	d.s.Do(c.addr, func(_ core.Node, out core.Sink) { c.core.Release(now, out) })
	c.waiting = c.waiting[1:]
	c.busy = false
	d.finished++
	if c.again > 0 {
		c.again--
		d.arrived++
		c.waiting = append(c.waiting, now)
	}
	if len(c.waiting) > 0 {
		d.acquire(c)
	} else if d.sc.Workload.PickIdle {
		d.idle = append(d.idle, c)
	}
	d.checkDone()
}

// crash stops a client inside its critical section; its section ends there and
// its queued requests are lost.
func (d *driver) crash(c *appClient) {
	now := d.s.Now()
	if c.inside {
		d.inside--
	}
	c.inside = false
	_ = d.oracles[c.res].Exit(string(c.addr.Client), now)
	d.lastExit = now
	d.s.Crash(c.addr)
	c.crashed = true
	d.crashes++
	d.crashedAt, d.crashPending = now, true
	d.arrived += c.again // requests it will never make count as lost
	d.finished += len(c.waiting) + c.again
	c.again = 0
	c.waiting = nil
	d.checkDone()
}

func (d *driver) checkDone() {
	if d.allArrived && d.finished == d.arrived {
		d.s.Stop()
	}
}

func (d *driver) metrics(seed uint64) Metrics {
	m := Metrics{
		Scenario: d.sc.Name, Protocol: d.sc.Protocol.Name(), Seed: seed,
		Requests: d.arrived, Entries: d.entries, Crashes: d.crashes, Rounds: d.rounds,
		Completed: d.allArrived && d.finished == d.arrived && d.err == nil,
		End:       d.s.Now(),
	}
	var overlaps []oracle.Overlap
	for _, o := range d.oracles {
		overlaps = append(overlaps, o.Overlaps(d.s.Now())...)
	}
	m.Overlaps = len(overlaps)
	if len(overlaps) > 0 {
		m.FirstOverlap = overlaps[0].String()
	}
	if d.err != nil {
		m.Error = d.err.Error()
	}
	if n := len(d.responses); n > 0 {
		sorted := slices.Clone(d.responses)
		slices.Sort(sorted)
		var sum time.Duration
		for _, r := range sorted {
			sum += r
		}
		m.ResponseMean = sum / time.Duration(n)
		m.ResponseP50 = sorted[n/2]
		m.ResponseP99 = sorted[min(n-1, n*99/100)]
		m.ResponseMax = sorted[n-1]
		m.UsableMin, m.UsableMean = d.usableMin, d.usableSum/time.Duration(n)
	}
	m.EntryTimes, m.LongestCrashBlock, m.ResetVoters = d.entryTimes, d.crashBlock, d.resetVoters
	if d.handoffs > 0 {
		m.HandoffMean = d.handoffSum / time.Duration(d.handoffs)
	}
	m.ResponseByClient = make(map[string]time.Duration, len(d.order))
	for _, c := range d.order {
		if c.entries > 0 {
			m.ResponseByClient[string(c.addr.Client)] = c.responseTime / time.Duration(c.entries)
		}
	}
	if start := core.Time(d.sc.Workload.StartAt); d.lastExit > start {
		m.Throughput = float64(m.Entries) / d.lastExit.Sub(start).Seconds()
	}
	return m
}
