package sim

import (
	"math"
	"time"
)

// ExpectedHandoff is E[handoff] for Sigma under saturation: when the holder
// releases, each of the n replicas receives the RELEASE after one delay and
// notifies the next client after another, and the next client enters with the
// m-th notification. So the handoff is the m-th smallest of n independent sums
// of two one-way delays, each uniform on [lo, hi]. It is computed as
// E[X_(m)] = ∫ P(X_(m) > x) dx with P(X_(m) ≤ x) = Σ_{k≥m} C(n,k) F(x)^k (1-F(x))^(n-k),
// F the CDF of the sum (a triangle on [2lo, 2hi]).
func ExpectedHandoff(n, m int, lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return 2 * lo
	}
	a, w := lo.Seconds(), (hi - lo).Seconds()
	sumCDF := func(x float64) float64 {
		y := x - 2*a
		switch {
		case y <= 0:
			return 0
		case y <= w:
			return y * y / (2 * w * w)
		case y <= 2*w:
			return 1 - (2*w-y)*(2*w-y)/(2*w*w)
		}
		return 1
	}
	const steps = 20000
	upper := 2 * hi.Seconds()
	dx := upper / steps
	var expect float64
	for i := range steps {
		x := (float64(i) + 0.5) * dx
		expect += (1 - BinomialTail(n, sumCDF(x), m)) * dx
	}
	return time.Duration(expect * float64(time.Second))
}

// SaturatedThroughput is 1/(Tcs + E[handoff]) in entries per second.
func SaturatedThroughput(cs time.Duration, n, m int, lo, hi time.Duration) float64 {
	return 1 / (cs + ExpectedHandoff(n, m, lo, hi)).Seconds()
}

// BinomialTail is P[Binomial(n, p) ≥ k].
func BinomialTail(n int, p float64, k int) float64 {
	if k <= 0 {
		return 1
	}
	var tail float64
	for j := k; j <= n; j++ {
		lg := lgammaInt(n+1) - lgammaInt(j+1) - lgammaInt(n-j+1)
		tail += math.Exp(lg + float64(j)*math.Log(p) + float64(n-j)*math.Log1p(-p))
	}
	return tail
}

func lgammaInt(n int) float64 {
	v, _ := math.Lgamma(float64(n))
	return v
}

// Z95 and Z999 are the normal quantiles of two-sided 95% and 99.9% intervals.
const (
	Z95  = 1.959964
	Z999 = 3.290527
)

// WilsonInterval is the Wilson score interval of a proportion k/n at normal
// quantile z (Z95 for 95%).
func WilsonInterval(k, n int, z float64) (lo, hi float64) {
	if n == 0 {
		return 0, 1
	}
	p := float64(k) / float64(n)
	nn := float64(n)
	den := 1 + z*z/nn
	center := (p + z*z/(2*nn)) / den
	half := z * math.Sqrt(p*(1-p)/nn+z*z/(4*nn*nn)) / den
	return max(0, center-half), min(1, center+half)
}
