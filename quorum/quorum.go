package quorum

import "fmt"

// Requirement says what a protocol needs from its quorums, as linear functions of
// the Byzantine bound b: any two quorums share at least IntersectPerB*b+IntersectBase
// servers, and some quorum is reachable while SilentPerB*b servers do not answer.
type Requirement struct {
	Name          string
	IntersectPerB int
	IntersectBase int
	SilentPerB    int
}

// Mutex is the backoff mutex requirement: intersection ≥ 3b+1, survive b failures.
var Mutex = Requirement{Name: "mutex", IntersectPerB: 3, IntersectBase: 1, SilentPerB: 1}

// Ordering is the ordering protocol requirement: intersection ≥ 2b+1, survive 2b
// silent servers.
var Ordering = Requirement{Name: "ordering", IntersectPerB: 2, IntersectBase: 1, SilentPerB: 2}

// MinServers is the smallest n for which the requirement can be met with b faults:
// 5b+1 for [Mutex], 6b+1 for [Ordering].
func (r Requirement) MinServers(b int) int {
	// ⌈(n+I)/2⌉ ≤ n-S  ⟺  n+I ≤ 2(n-S)  ⟺  n ≥ I+2S.
	return r.IntersectPerB*b + r.IntersectBase + 2*r.SilentPerB*b
}

// Threshold is a threshold quorum system: every set of at least Size of the N
// servers is a quorum.
type Threshold struct {
	N    int // servers
	B    int // Byzantine servers tolerated
	Size int // quorum size q
	Req  Requirement
}

// New returns the smallest threshold quorum system over n servers that meets r
// with b Byzantine servers, or an error naming the violated bound.
func New(n, b int, r Requirement) (Threshold, error) {
	switch {
	case n < 1:
		return Threshold{}, fmt.Errorf("quorum: n=%d: need at least one server", n)
	case b < 0:
		return Threshold{}, fmt.Errorf("quorum: b=%d: the Byzantine bound cannot be negative", b)
	case n < r.MinServers(b):
		return Threshold{}, fmt.Errorf("quorum: %s quorums with n=%d servers cannot tolerate b=%d Byzantine: need n ≥ %db+%d = %d",
			r.Name, n, b, r.IntersectPerB+2*r.SilentPerB, r.IntersectBase, r.MinServers(b))
	}
	need := r.IntersectPerB*b + r.IntersectBase
	q := (n + need + 1) / 2 // ⌈(n+need)/2⌉: the least q with 2q-n ≥ need
	return Threshold{N: n, B: b, Size: q, Req: r}, nil
}

// MinIntersection is the fewest servers two quorums can share.
func (t Threshold) MinIntersection() int { return 2*t.Size - t.N }

// Tolerates reports whether a quorum is still reachable with silent servers down.
func (t Threshold) Tolerates(silent int) bool { return t.N-silent >= t.Size }

// IsQuorum reports whether k distinct servers form a quorum.
func (t Threshold) IsQuorum(k int) bool { return k >= t.Size }

// String prints e.g. "mutex n=6 b=1 q=5".
func (t Threshold) String() string {
	return fmt.Sprintf("%s n=%d b=%d q=%d", t.Req.Name, t.N, t.B, t.Size)
}
