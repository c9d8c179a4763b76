package ordering

import "github.com/dhtsync/dhtsync/core"

// Replica hosts one replica of an object: its ordering Server and the server
// of the mutex its clients contend through, on the same logical replica.
type Replica struct {
	Server *Server
	Mutex  core.Node
}

// Start implements core.Starter.
func (r *Replica) Start(now core.Time, out core.Sink) {
	r.Server.Start(now, out)
	if s, ok := r.Mutex.(core.Starter); ok {
		s.Start(now, out)
	}
}

// Receive implements core.Node.
func (r *Replica) Receive(now core.Time, from core.Addr, m core.Message, out core.Sink) {
	if IsOrdering(m) {
		r.Server.Receive(now, from, m, out)
		return
	}
	r.Mutex.Receive(now, from, m, out)
}

// Wake implements core.Node.
func (r *Replica) Wake(now core.Time, t core.Timer, out core.Sink) {
	if t.Kind >= timerRecover {
		r.Server.Wake(now, t, out)
		return
	}
	r.Mutex.Wake(now, t, out)
}
