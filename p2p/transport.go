package p2p

import (
	"bufio"
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"

	"github.com/dhtsync/dhtsync/p2p/wire"
	"github.com/dhtsync/dhtsync/p2p/wire/pb"
)

// Handler receives the envelopes that arrive on a protocol's streams. It runs
// on the stream's reader goroutine and must not block for long.
type Handler func(from peer.ID, proto protocol.ID, env *pb.Envelope)

// Handlers are a transport's callbacks.
type Handlers struct {
	Receive Handler
	// Unreachable, if set, learns of a peer to which a stream could not be
	// opened (its queued envelopes are lost).
	Unreachable func(peer.ID)
}

// TransportConfig configures a [Transport]. Zero fields take the defaults.
type TransportConfig struct {
	// MaxMessage caps one envelope (wire.MaxMessage).
	MaxMessage int
	// IdleTimeout closes a stream on which nothing arrived for this long, and
	// bounds how long a started frame may take to arrive: a stalled sender
	// costs one goroutine for at most this long (1 minute).
	IdleTimeout time.Duration
	// WriteTimeout bounds the write of one frame; a peer that stops reading
	// loses its stream (5 s).
	WriteTimeout time.Duration
	// DialTimeout bounds opening a stream (10 s).
	DialTimeout time.Duration
	// Backlog is how many envelopes may wait for one stream; past it Send
	// refuses (256).
	Backlog int
}

func (c TransportConfig) withDefaults() TransportConfig {
	if c.MaxMessage <= 0 {
		c.MaxMessage = wire.MaxMessage
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = time.Minute
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = 5 * time.Second
	}
	if c.DialTimeout <= 0 {
		c.DialTimeout = 10 * time.Second
	}
	if c.Backlog <= 0 {
		c.Backlog = 256
	}
	return c
}

// ErrBacklog is returned by Send when a stream's queue is full: the envelope
// is dropped, which the protocols treat as a lost message.
var ErrBacklog = errors.New("p2p: send queue full")

// Transport carries envelopes between peers. Each (peer, protocol) pair has one
// session: one stream, opened by whichever side sent first, that carries
// envelopes both ways, so replies and pushed notifications reuse it. Sends
// never block: they queue for the session's writer goroutine.
type Transport struct {
	h        host.Host
	cfg      TransportConfig
	handlers Handlers
	log      *slog.Logger

	mu       sync.Mutex
	sessions map[sessionKey]*session
	closed   bool
}

type sessionKey struct {
	peer  peer.ID
	proto protocol.ID
}

type session struct {
	key    sessionKey
	out    chan *pb.Envelope
	last   chan *pb.Envelope // one envelope to write before ending the session
	stream network.Stream    // set once open, under Transport.mu
	done   chan struct{}
	once   sync.Once
}

// NewTransport registers stream handlers for protos on h and delivers what
// arrives to the handlers.
func NewTransport(h host.Host, protos []protocol.ID, handlers Handlers, cfg TransportConfig, log *slog.Logger) *Transport {
	if log == nil {
		log = slog.Default()
	}
	t := &Transport{h: h, cfg: cfg.withDefaults(), handlers: handlers, log: log, sessions: map[sessionKey]*session{}}
	for _, p := range protos {
		h.SetStreamHandler(p, t.accept)
	}
	return t
}

// Host is the transport's libp2p host.
func (t *Transport) Host() host.Host { return t.h }

// Send queues env for peer p on protocol proto.
func (t *Transport) Send(p peer.ID, proto protocol.ID, env *pb.Envelope) error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return errors.New("p2p: transport closed")
	}
	s := t.sessions[sessionKey{p, proto}]
	if s == nil {
		s = t.newSession(sessionKey{p, proto})
		go t.dialAndWrite(s)
	}
	t.mu.Unlock()
	select {
	case s.out <- env:
		return nil
	default:
		return ErrBacklog
	}
}

// newSession registers a session; t.mu is held.
func (t *Transport) newSession(k sessionKey) *session {
	s := &session{key: k, out: make(chan *pb.Envelope, t.cfg.Backlog), last: make(chan *pb.Envelope, 1),
		done: make(chan struct{})}
	t.sessions[k] = s
	return s
}

func (t *Transport) dialAndWrite(s *session) {
	ctx, cancel := context.WithTimeout(context.Background(), t.cfg.DialTimeout)
	st, err := t.h.NewStream(ctx, s.key.peer, s.key.proto)
	cancel()
	if err != nil {
		t.log.Debug("open stream", "peer", s.key.peer, "protocol", s.key.proto, "err", err)
		t.drop(s)
		if t.handlers.Unreachable != nil {
			t.handlers.Unreachable(s.key.peer)
		}
		return
	}
	t.mu.Lock()
	s.stream = st
	t.mu.Unlock()
	go t.read(s, st)
	t.write(s, st)
}

// accept serves a stream another peer opened. It becomes the session for
// replies unless one is already open, in which case it is only read.
func (t *Transport) accept(st network.Stream) {
	k := sessionKey{st.Conn().RemotePeer(), st.Protocol()}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		_ = st.Reset()
		return
	}
	s := t.sessions[k]
	if s == nil {
		s = t.newSession(k)
		s.stream = st
		go t.write(s, st)
	} else {
		s = &session{key: k, stream: st, done: make(chan struct{})} // read-only
	}
	t.mu.Unlock()
	t.read(s, st)
}

func (t *Transport) write(s *session, st network.Stream) {
	w := bufio.NewWriter(st)
	// A watchdog rather than SetWriteDeadline: not every transport (the mock
	// network) honours deadlines.
	watchdog := time.AfterFunc(time.Hour, func() { _ = st.Reset() })
	watchdog.Stop()
	defer watchdog.Stop()
	for {
		var env *pb.Envelope
		last := false
		select {
		case env = <-s.out:
		case env = <-s.last:
			last = true
		case <-s.done:
			return
		}
		watchdog.Reset(t.cfg.WriteTimeout)
		err := wire.WriteFrame(w, env, t.cfg.MaxMessage)
		if err == nil && (last || len(s.out) == 0) {
			err = w.Flush() // batch what queued meanwhile into one write
		}
		watchdog.Stop()
		if err != nil {
			t.log.Debug("write", "peer", s.key.peer, "protocol", s.key.proto, "err", err)
			t.drop(s)
			return
		}
		if last {
			t.end(s, true)
			return
		}
	}
}

func (t *Transport) read(s *session, st network.Stream) {
	r := bufio.NewReader(st)
	// The idle timeout also bounds a frame that started and stalled. A
	// watchdog rather than SetReadDeadline: not every transport honours it.
	watchdog := time.AfterFunc(t.cfg.IdleTimeout, func() { _ = st.Reset() })
	defer watchdog.Stop()
	for {
		watchdog.Reset(t.cfg.IdleTimeout)
		env, err := wire.ReadFrame(r, t.cfg.MaxMessage)
		switch {
		case err == nil:
			t.handlers.Receive(s.key.peer, s.key.proto, env)
		case errors.Is(err, wire.ErrTooLarge):
			// Out of step: tell the sender why, then end this stream once the
			// answer is out.
			t.closeWith(s, wire.TransportError(pb.Error_MALFORMED, err.Error()))
			return
		case errors.Is(err, wire.ErrMalformed):
			// The frame was read whole: answer it and go on.
			_ = t.Send(s.key.peer, s.key.proto, wire.TransportError(pb.Error_MALFORMED, err.Error()))
		default:
			t.drop(s)
			return
		}
	}
}

// closeWith sends a last envelope on session s and then resets its stream.
// A session that is only read has no writer: the envelope goes by the
// registered session and the stream is reset at once.
func (t *Transport) closeWith(s *session, env *pb.Envelope) {
	if s.last != nil {
		select {
		case s.last <- env:
			return
		default: // already closing
		}
	} else {
		_ = t.Send(s.key.peer, s.key.proto, env)
	}
	t.drop(s)
}

// drop ends a session: its stream is reset and, if it is the registered one, a
// later Send opens a new stream.
func (t *Transport) drop(s *session) { t.end(s, false) }

// end ends a session, resetting its stream, or closing it (graceful) so
// that what was written is still read.
func (t *Transport) end(s *session, graceful bool) {
	s.once.Do(func() {
		close(s.done)
		t.mu.Lock()
		if t.sessions[s.key] == s {
			delete(t.sessions, s.key)
		}
		st := s.stream
		t.mu.Unlock()
		switch {
		case st == nil:
		case graceful:
			_ = st.Close()
		default:
			_ = st.Reset()
		}
	})
}

// Close resets the streams of every session that sends and removes the stream
// handlers; closing the host ends the rest.
func (t *Transport) Close() {
	t.mu.Lock()
	t.closed = true
	sessions := make([]*session, 0, len(t.sessions))
	for _, s := range t.sessions {
		sessions = append(sessions, s)
	}
	t.mu.Unlock()
	for _, p := range wire.Protocols {
		t.h.RemoveStreamHandler(p)
	}
	for _, s := range sessions {
		t.drop(s)
	}
}
