package core

// Sent is one message recorded by a [Recorder].
type Sent struct {
	To  Addr
	Msg Message
}

// Armed is one timer recorded by a [Recorder].
type Armed struct {
	At    Time
	Timer Timer
}

// Recorder is a [Sink] that keeps everything a core produced. It is how unit tests
// step a core by hand and look at its outputs.
type Recorder struct {
	Sent   []Sent
	Timers []Armed
	Events []Event
}

// Send records a message.
func (r *Recorder) Send(to Addr, m Message) { r.Sent = append(r.Sent, Sent{to, m}) }

// SetTimer records a timer.
func (r *Recorder) SetTimer(at Time, t Timer) { r.Timers = append(r.Timers, Armed{at, t}) }

// Emit records an event.
func (r *Recorder) Emit(e Event) { r.Events = append(r.Events, e) }

// Reset forgets everything recorded so far.
func (r *Recorder) Reset() { r.Sent, r.Timers, r.Events = r.Sent[:0], r.Timers[:0], r.Events[:0] }
