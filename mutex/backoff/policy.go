package backoff

import (
	"math/rand/v2"
	"strconv"
	"time"
)

// maxWindow caps the backoff window multiplier so that 2^s cannot overflow; at
// 2^20 windows of a 100 ms base already reach a day.
const maxWindow = 1 << 20

// Policy draws the sleep before the next contention round.
type Policy interface {
	// Delay returns the sleep after the attempt-th failed round (attempt ≥ 1),
	// with base the smallest sleep, Δ+4δ.
	Delay(rng *rand.Rand, attempt int, base time.Duration) time.Duration
	// Name is a short label for reports ("exponential", "polynomial-2").
	Name() string
}

// Exponential is the paper's policy: uniform in [base, 2^s·base].
type Exponential struct{}

// Delay implements [Policy].
func (Exponential) Delay(rng *rand.Rand, attempt int, base time.Duration) time.Duration {
	window := int64(maxWindow)
	if attempt < 20 {
		window = 1 << attempt
	}
	return uniformWindow(rng, base, window)
}

// Name implements [Policy].
func (Exponential) Name() string { return "exponential" }

// Polynomial is the polynomial backoff the paper suggests trying (§4, after [7]):
// uniform in [base, (s+1)^Degree·base]. Its window grows more slowly than the
// exponential one once s exceeds a few rounds.
type Polynomial struct {
	Degree int
}

// Delay implements [Policy].
func (p Polynomial) Delay(rng *rand.Rand, attempt int, base time.Duration) time.Duration {
	window := int64(1)
	for range p.Degree {
		window *= int64(attempt + 1)
		if window >= maxWindow {
			window = maxWindow
			break
		}
	}
	return uniformWindow(rng, base, window)
}

// Name implements [Policy].
func (p Polynomial) Name() string { return "polynomial-" + strconv.Itoa(p.Degree) }

// uniformWindow draws uniformly from [base, window·base].
func uniformWindow(rng *rand.Rand, base time.Duration, window int64) time.Duration {
	if window <= 1 || base <= 0 {
		return base
	}
	span := int64(base) * (window - 1)
	if span/(window-1) != int64(base) { // overflow: clamp to the largest span
		span = 1<<62 - int64(base)
	}
	return base + time.Duration(rng.Int64N(span+1))
}
