package sim

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// Dist is a distribution of durations (message delays, critical-section lengths).
type Dist interface {
	Sample(r *rand.Rand) time.Duration
	// Mean is the distribution's expectation.
	Mean() time.Duration
	String() string
}

// Constant always gives D.
type Constant struct{ D time.Duration }

func (c Constant) Sample(*rand.Rand) time.Duration { return c.D }
func (c Constant) Mean() time.Duration             { return c.D }
func (c Constant) String() string                  { return fmt.Sprintf("const(%v)", c.D) }

// Uniform is uniform on [Lo, Hi].
type Uniform struct{ Lo, Hi time.Duration }

func (u Uniform) Sample(r *rand.Rand) time.Duration {
	if u.Hi <= u.Lo {
		return u.Lo
	}
	return u.Lo + time.Duration(r.Int64N(int64(u.Hi-u.Lo)+1))
}
func (u Uniform) Mean() time.Duration { return (u.Lo + u.Hi) / 2 }
func (u Uniform) String() string      { return fmt.Sprintf("uniform(%v,%v)", u.Lo, u.Hi) }

// Exponential is Min plus an exponential variable of mean MeanExtra.
type Exponential struct{ Min, MeanExtra time.Duration }

func (e Exponential) Sample(r *rand.Rand) time.Duration {
	return e.Min + time.Duration(r.ExpFloat64()*float64(e.MeanExtra))
}
func (e Exponential) Mean() time.Duration { return e.Min + e.MeanExtra }
func (e Exponential) String() string      { return fmt.Sprintf("exp(min %v, mean+%v)", e.Min, e.MeanExtra) }
