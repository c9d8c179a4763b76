package backoff

import "time"

// Try asks a server for its status (the paper's try()). Lease is the Δ the client
// asks for (the §5 per-call Δ); Round tells replies of different rounds apart.
type Try struct {
	Round uint64
	Lease time.Duration
}

// TryReply answers a [Try]. Held is how long the server kept the try in its delayed
// reply list before granting it (0 without delayed replies); the client uses it to
// place the grant in time without synchronized clocks.
type TryReply struct {
	Round uint64
	Free  bool
	Held  time.Duration
}

// Release gives back the grant made for Round (the early-release extension).
type Release struct {
	Round uint64
}
