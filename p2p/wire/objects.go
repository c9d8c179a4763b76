package wire

import (
	"cmp"
	"slices"

	"github.com/dhtsync/dhtsync/core"
	"github.com/dhtsync/dhtsync/ordering"
	"github.com/dhtsync/dhtsync/p2p/wire/pb"
)

func opID(id ordering.OpID) *pb.OpID { return &pb.OpID{Client: string(id.Client), Seq: id.Seq} }

func decodeOpID(id *pb.OpID) (ordering.OpID, error) {
	if id == nil || id.Client == "" || id.Seq == 0 {
		return ordering.OpID{}, malformed("operation id %v", id)
	}
	return ordering.OpID{Client: core.ClientID(id.Client), Seq: id.Seq}, nil
}

func op(o ordering.Op) *pb.Op { return &pb.Op{Id: opID(o.ID), Body: o.Body} }

func ops(os []ordering.Op) []*pb.Op {
	out := make([]*pb.Op, len(os))
	for i, o := range os {
		out[i] = op(o)
	}
	return out
}

func decodeOp(o *pb.Op) (ordering.Op, error) {
	id, err := decodeOpID(o.GetId())
	return ordering.Op{ID: id, Body: o.GetBody()}, err
}

func decodeOps(os []*pb.Op) ([]ordering.Op, error) {
	if len(os) == 0 {
		return nil, nil
	}
	out := make([]ordering.Op, len(os))
	for i, o := range os {
		var err error
		if out[i], err = decodeOp(o); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func rank(r ordering.Rank) *pb.Rank { return &pb.Rank{N: r.N, Client: string(r.Client)} }

func decodeRank(r *pb.Rank) ordering.Rank {
	return ordering.Rank{N: r.GetN(), Client: core.ClientID(r.GetClient())}
}

func snapshot(s *ordering.Snapshot) *pb.Snapshot {
	if s == nil {
		return nil
	}
	out := &pb.Snapshot{Version: s.Version, Parent: s.Parent[:], Data: s.Data}
	for _, m := range s.Applied {
		out.Applied = append(out.Applied, &pb.Mark{Client: string(m.Client), Seq: m.Seq})
	}
	for _, r := range s.Results {
		out.Results = append(out.Results, &pb.Result{Id: opID(r.ID), Version: r.Version, Body: r.Body})
	}
	return out
}

// decodeSnapshot rebuilds a snapshot and its digest. The marks and results must
// be sorted and unique, as [ordering.Derive] makes them: the digest covers
// their order.
func decodeSnapshot(s *pb.Snapshot, required bool) (*ordering.Snapshot, error) {
	if s == nil {
		if required {
			return nil, malformed("missing snapshot")
		}
		return nil, nil
	}
	var parent ordering.Digest
	if len(s.Parent) != len(parent) {
		return nil, malformed("snapshot parent digest of %d bytes", len(s.Parent))
	}
	copy(parent[:], s.Parent)
	applied := make([]ordering.Mark, len(s.Applied))
	for i, m := range s.Applied {
		applied[i] = ordering.Mark{Client: core.ClientID(m.Client), Seq: m.Seq}
	}
	if !slices.IsSortedFunc(applied, func(a, b ordering.Mark) int { return cmp.Compare(a.Client, b.Client) }) ||
		hasDuplicateClients(applied) {
		return nil, malformed("snapshot marks not sorted by client")
	}
	results := make([]ordering.Result, len(s.Results))
	for i, r := range s.Results {
		id, err := decodeOpID(r.Id)
		if err != nil {
			return nil, err
		}
		results[i] = ordering.Result{ID: id, Version: r.Version, Body: r.Body}
	}
	return ordering.NewSnapshot(s.Version, parent, s.Data, applied, results), nil
}

func hasDuplicateClients(ms []ordering.Mark) bool {
	for i := 1; i < len(ms); i++ {
		if ms[i].Client == ms[i-1].Client {
			return true
		}
	}
	return false
}
