package sim

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// The closed forms against Monte Carlo and known values.
func TestExpectedHandoffMatchesMonteCarlo(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		n, m   int
		lo, hi time.Duration
	}{{8, 6, 25 * time.Millisecond, 75 * time.Millisecond}, {8, 6, 0, 100 * time.Millisecond}, {5, 3, 10 * time.Millisecond, 30 * time.Millisecond}} {
		const trials = 200000
		var sum float64
		x := make([]float64, c.n)
		for range trials {
			for i := range x {
				x[i] = Uniform{c.lo, c.hi}.Sample(rng).Seconds() + Uniform{c.lo, c.hi}.Sample(rng).Seconds()
			}
			slices.Sort(x)
			sum += x[c.m-1]
		}
		mc := sum / trials
		got := ExpectedHandoff(c.n, c.m, c.lo, c.hi).Seconds()
		if math.Abs(got-mc)/mc > 0.005 {
			t.Errorf("%+v: closed form %.5fs, Monte Carlo %.5fs", c, got, mc)
		}
	}
	if got := ExpectedHandoff(8, 6, 50*time.Millisecond, 50*time.Millisecond); got != 100*time.Millisecond {
		t.Errorf("constant delay: %v, want exactly two delays", got)
	}
}

func TestBinomialTailKnownValues(t *testing.T) {
	// papers/README: (n, m) = (5, 3), p = 1e-3: about 3e-3; (32, 24): about 7e-43.
	if got := BinomialTail(3, 1e-3, 2*3-5); math.Abs(got-2.997e-3) > 1e-5 {
		t.Errorf("(5,3): %g", got)
	}
	if got := BinomialTail(24, 1e-3, 2*24-32); got < 6e-43 || got > 8e-43 {
		t.Errorf("(32,24): %g", got)
	}
	if lo, hi := WilsonInterval(10, 1000, Z95); lo > 0.01 || hi < 0.01 || hi > 0.02 {
		t.Errorf("Wilson(10/1000) = [%g, %g]", lo, hi)
	}
}
