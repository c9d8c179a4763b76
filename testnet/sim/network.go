package sim

import (
	"math/rand/v2"
	"slices"
	"time"

	"github.com/dhtsync/dhtsync/core"
)

// Network decides the fate of every message: dropped, delivered after a delay,
// or delivered twice.
type Network struct {
	// Delay is the one-way delay of every message (nil: 0).
	Delay Dist
	// Loss is the probability a message is dropped.
	Loss float64
	// Duplicate is the probability a delivered message is delivered a second time,
	// after an independent delay.
	Duplicate float64
	// Reorder is the probability a message is held back by an extra delay uniform
	// in [0, ReorderBy], so that later messages overtake it.
	Reorder   float64
	ReorderBy time.Duration
	// Partitions cut nodes off for a while.
	Partitions []Partition
	// FIFO delivers the messages of each sender-receiver pair in the order they
	// were sent (a later one waits for an earlier one), as TCP would and as
	// Lamport's algorithm assumes.
	FIFO bool
}

// Partition drops every message between a node in Isolated and a node outside it
// during [From, Until).
type Partition struct {
	From, Until core.Time
	Isolated    []core.Addr
}

func (p Partition) cuts(now core.Time, a, b core.Addr) bool {
	if now < p.From || now >= p.Until {
		return false
	}
	return slices.Contains(p.Isolated, a) != slices.Contains(p.Isolated, b)
}

// deliveries returns the delays after which a message sent now from a to b arrives:
// none if it is lost, two if it is duplicated.
func (n *Network) deliveries(r *rand.Rand, now core.Time, a, b core.Addr, buf []time.Duration) []time.Duration {
	for _, p := range n.Partitions {
		if p.cuts(now, a, b) {
			return buf
		}
	}
	if n.Loss > 0 && r.Float64() < n.Loss {
		return buf
	}
	buf = append(buf, n.delay(r))
	if n.Duplicate > 0 && r.Float64() < n.Duplicate {
		buf = append(buf, n.delay(r))
	}
	return buf
}

func (n *Network) delay(r *rand.Rand) time.Duration {
	var d time.Duration
	if n.Delay != nil {
		d = n.Delay.Sample(r)
	}
	if n.Reorder > 0 && r.Float64() < n.Reorder {
		d += time.Duration(r.Int64N(int64(n.ReorderBy) + 1))
	}
	return d
}
