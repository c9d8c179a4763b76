package quorum

import (
	"math/bits"
	"strings"
	"testing"
)

// bruteForce enumerates every subset of n ≤ 12 servers and reports, for quorum size
// q, the smallest pairwise intersection of quorums and whether a quorum survives
// every choice of `silent` silent servers.
func bruteForce(n, q, silent int) (minInter int, available bool) {
	var quorums []uint32
	for s := uint32(0); s < 1<<n; s++ {
		if bits.OnesCount32(s) >= q {
			quorums = append(quorums, s)
		}
	}
	minInter = n + 1
	for _, a := range quorums {
		for _, b := range quorums {
			if k := bits.OnesCount32(a & b); k < minInter {
				minInter = k
			}
		}
	}
	available = true
	for down := uint32(0); down < 1<<n; down++ {
		if bits.OnesCount32(down) != silent {
			continue
		}
		found := false
		for _, qs := range quorums {
			if qs&down == 0 {
				found = true
				break
			}
		}
		if !found {
			available = false
			break
		}
	}
	return minInter, available
}

func TestThresholdMatchesBruteForce(t *testing.T) {
	for _, r := range []Requirement{Mutex, Ordering} {
		for n := 1; n <= 12; n++ {
			for b := 0; b <= 3; b++ {
				need := r.IntersectPerB*b + r.IntersectBase
				silent := r.SilentPerB * b
				// Brute force: is there any threshold q meeting r, and which is least?
				feasibleQ := 0
				for q := 1; q <= n; q++ {
					inter, avail := bruteForce(n, q, silent)
					if inter >= need && avail {
						feasibleQ = q
						break
					}
				}
				th, err := New(n, b, r)
				if feasibleQ == 0 {
					if err == nil {
						t.Fatalf("%s n=%d b=%d: New accepted %v but no threshold quorum system exists", r.Name, n, b, th)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s n=%d b=%d: New refused (%v) but q=%d works", r.Name, n, b, err, feasibleQ)
				}
				if th.Size != feasibleQ {
					t.Fatalf("%s n=%d b=%d: size %d, brute force least %d", r.Name, n, b, th.Size, feasibleQ)
				}
				inter, avail := bruteForce(n, th.Size, silent)
				if inter != th.MinIntersection() || !avail || !th.Tolerates(silent) || th.Tolerates(n-th.Size+1) {
					t.Fatalf("%v: helpers disagree with brute force (inter %d vs %d, avail %v)", th, th.MinIntersection(), inter, avail)
				}
			}
		}
	}
}

func TestBoundsAreTheKnownOnes(t *testing.T) {
	for b := 0; b < 10; b++ {
		if got := Mutex.MinServers(b); got != 5*b+1 {
			t.Errorf("mutex b=%d: min servers %d, want 5b+1", b, got)
		}
		if got := Ordering.MinServers(b); got != 6*b+1 {
			t.Errorf("ordering b=%d: min servers %d, want 6b+1", b, got)
		}
	}
}

func TestImpossibleConfigurationsNameTheBound(t *testing.T) {
	cases := []struct {
		n, b int
		r    Requirement
		want string
	}{
		{5, 1, Mutex, "n ≥ 5b+1 = 6"},
		{11, 2, Mutex, "n ≥ 5b+1 = 11"}, // feasible: checked below
		{6, 1, Ordering, "n ≥ 6b+1 = 7"},
		{0, 0, Mutex, "at least one server"},
		{7, -1, Mutex, "cannot be negative"},
	}
	for _, c := range cases {
		_, err := New(c.n, c.b, c.r)
		if c.n == 11 {
			if err != nil {
				t.Errorf("n=11 b=2 mutex should be feasible: %v", err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%d,%d,%s) = %v, want error containing %q", c.n, c.b, c.r.Name, err, c.want)
		}
	}
}
