package mutex

import (
	"cmp"
	"slices"

	"github.com/dhtsync/dhtsync/core"
)

// Finished remembers, per client, the latest request (a timestamp or round
// number, increasing per client) that the client released. A replica uses it to
// recognize a copy of that request delayed in the network: served, it would hand
// the vote to a client that no longer wants it (a phantom owner) for a lease.
//
// It keeps at most Max clients; past that the older half (by release time) is
// forgotten, since a request delayed that long is as unlikely as any message
// older than Max critical sections.
type Finished struct {
	Max  int
	last map[core.ClientID]finished
}

type finished struct {
	req uint64
	at  core.Time
}

// Done records that client released request req at time now.
func (f *Finished) Done(now core.Time, client core.ClientID, req uint64) {
	if f.last == nil {
		f.last = make(map[core.ClientID]finished)
	}
	if old, ok := f.last[client]; ok && old.req >= req {
		return
	}
	f.last[client] = finished{req, now}
	if len(f.last) > max(f.Max, 1) {
		f.forgetOlderHalf()
	}
}

// Stale reports whether request req of client was already released.
func (f *Finished) Stale(client core.ClientID, req uint64) bool {
	old, ok := f.last[client]
	return ok && req <= old.req
}

func (f *Finished) forgetOlderHalf() {
	type aged struct {
		client core.ClientID
		at     core.Time
	}
	all := make([]aged, 0, len(f.last))
	for c, x := range f.last {
		all = append(all, aged{c, x.at})
	}
	slices.SortFunc(all, func(a, b aged) int {
		return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.client, b.client))
	})
	for _, a := range all[:len(all)/2] {
		delete(f.last, a.client)
	}
}

// FinishedRequest is one entry of a [Finished] filter, for carrying it into
// another hosting period.
type FinishedRequest struct {
	Client core.ClientID
	Req    uint64
	At     core.Time
}

// Requests returns the remembered releases, sorted by client.
func (f *Finished) Requests() []FinishedRequest {
	out := make([]FinishedRequest, 0, len(f.last))
	for c, x := range f.last {
		out = append(out, FinishedRequest{c, x.req, x.at})
	}
	slices.SortFunc(out, func(a, b FinishedRequest) int { return cmp.Compare(a.Client, b.Client) })
	return out
}

// Restore adds the releases of rs.
func (f *Finished) Restore(rs []FinishedRequest) {
	for _, r := range rs {
		f.Done(r.At, r.Client, r.Req)
	}
}
