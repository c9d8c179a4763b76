package ordering

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/dhtsync/dhtsync/core"
)

// OpID names an operation: its client and the client's sequence number (1, 2,
// ...). A client's operations are applied in sequence order, so "reflects" is a
// per-client high-water mark.
type OpID struct {
	Client core.ClientID
	Seq    uint64
}

func compareOpIDs(a, b OpID) int {
	return cmp.Or(cmp.Compare(a.Client, b.Client), cmp.Compare(a.Seq, b.Seq))
}

// Op is an operation submitted to the object.
type Op struct {
	ID   OpID
	Body []byte
}

// Digest identifies a snapshot's content.
type Digest [32]byte

// Mark is a client's high-water mark: its operations up to Seq are applied.
type Mark struct {
	Client core.ClientID
	Seq    uint64
}

// Result is an operation's response, kept for KeepVersions versions after the
// version that applied it.
type Result struct {
	ID      OpID
	Version uint64
	Body    []byte
}

// Snapshot is a state of the object: the protocol's σ. It is immutable once
// made (replicas and clients share it), and identified by its Digest.
type Snapshot struct {
	Version uint64
	// Parent is the digest of the state it was derived from (zero for version 0).
	Parent  Digest
	Data    []byte
	Applied []Mark   // sorted by client
	Results []Result // sorted by ID
	digest  Digest
}

// NewSnapshot seals a snapshot, computing its digest. Fields must not change
// afterwards.
func NewSnapshot(version uint64, parent Digest, data []byte, applied []Mark, results []Result) *Snapshot {
	s := &Snapshot{Version: version, Parent: parent, Data: data, Applied: applied, Results: results}
	h := sha256.New()
	var b []byte
	b = binary.AppendUvarint(b, version)
	b = append(b, parent[:]...)
	b = binary.AppendUvarint(b, uint64(len(data)))
	b = append(b, data...)
	for _, m := range applied {
		b = appendStrings(b, string(m.Client))
		b = binary.AppendUvarint(b, m.Seq)
	}
	for _, r := range results {
		b = appendStrings(b, string(r.ID.Client), string(r.Body))
		b = binary.AppendUvarint(b, r.ID.Seq)
		b = binary.AppendUvarint(b, r.Version)
	}
	h.Write(b)
	copy(s.digest[:], h.Sum(nil))
	return s
}

// Initial is version 0 of every object: empty.
func Initial() *Snapshot { return NewSnapshot(0, Digest{}, nil, nil, nil) }

// Digest identifies the snapshot's content.
func (s *Snapshot) Digest() Digest { return s.digest }

// Applied returns the high-water mark of client.
func (s *Snapshot) mark(c core.ClientID) uint64 {
	i, found := slices.BinarySearchFunc(s.Applied, c, func(m Mark, c core.ClientID) int { return cmp.Compare(m.Client, c) })
	if !found {
		return 0
	}
	return s.Applied[i].Seq
}

// Reflects reports whether the operation was applied in this or an earlier
// version (the paper's σ.reflects(o)).
func (s *Snapshot) Reflects(id OpID) bool { return id.Seq <= s.mark(id.Client) }

// Result returns the response of an applied operation, while it is kept.
func (s *Snapshot) Result(id OpID) ([]byte, bool) {
	i, found := slices.BinarySearchFunc(s.Results, id, func(r Result, id OpID) int { return compareOpIDs(r.ID, id) })
	if !found {
		return nil, false
	}
	return s.Results[i].Body, true
}

// Derive applies ops to s (the paper's apply(pending, σ)): in a deterministic
// order, each client's operations in sequence, skipping the ones s reflects and
// the ones whose predecessor is missing. Results older than keep versions are
// dropped. It returns nil when no operation applies.
func Derive(obj Object, s *Snapshot, ops []Op, keep uint64) *Snapshot {
	ops = slices.Clone(ops)
	slices.SortFunc(ops, func(a, b Op) int { return compareOpIDs(a.ID, b.ID) })
	data := s.Data
	marks := make(map[core.ClientID]uint64, len(s.Applied))
	for _, m := range s.Applied {
		marks[m.Client] = m.Seq
	}
	version := s.Version + 1
	var fresh []Result
	for _, op := range ops {
		if op.ID.Seq != marks[op.ID.Client]+1 {
			continue // applied already, or a gap: its predecessor is not pending yet
		}
		var result []byte
		data, result = obj.Apply(data, op.Body)
		marks[op.ID.Client] = op.ID.Seq
		fresh = append(fresh, Result{ID: op.ID, Version: version, Body: result})
	}
	if len(fresh) == 0 {
		return nil
	}
	applied := make([]Mark, 0, len(marks))
	for c, seq := range marks {
		applied = append(applied, Mark{c, seq})
	}
	slices.SortFunc(applied, func(a, b Mark) int { return cmp.Compare(a.Client, b.Client) })
	var results []Result
	for _, r := range s.Results {
		if r.Version+keep > version {
			results = append(results, r)
		}
	}
	results = append(results, fresh...)
	slices.SortFunc(results, func(a, b Result) int { return compareOpIDs(a.ID, b.ID) })
	return NewSnapshot(version, s.Digest(), data, applied, results)
}

// String names the snapshot by version and digest prefix, e.g. "v21#3fa2c1d0";
// traces print this rather than a pointer.
func (s *Snapshot) String() string {
	if s == nil {
		return "<nil>"
	}
	return fmt.Sprintf("v%d#%x", s.Version, s.digest[:4])
}
