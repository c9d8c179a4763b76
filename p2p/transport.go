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
	h       host.Host
	cfg     TransportConfig
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
	stream network.Stream // set once open, under Transport.mu
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
	s := &session{key: k, out: make(chan *pb.Envelope, t.cfg.Backlog), done: make(chan struct{})}
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
	for {
		var env *pb.Envelope
		select {
		case env = <-s.out:
		case <-s.done:
			return
		}
		_ = st.SetWriteDeadline(time.Now().Add(t.cfg.WriteTimeout))
		err := wire.WriteFrame(w, env, t.cfg.MaxMessage)
		if err == nil && len(s.out) == 0 {
			err = w.Flush() // batch what queued meanwhile into one write
		}
		if err != nil {
			t.log.Debug("write", "peer", s.key.peer, "protocol", s.key.proto, "err", err)
			t.drop(s)
			return
		}
	}
}

func (t *Transport) read(s *session, st network.Stream) {
	r := bufio.NewReader(st)
	for {
		_ = st.SetReadDeadline(time.Now().Add(t.cfg.IdleTimeout))
		env, err := wire.ReadFrame(r, t.cfg.MaxMessage)
		if err != nil {
			if errors.Is(err, wire.ErrMalformed) {
				// Out of step (an oversized frame) or garbage: tell the sender
				// why, then give up on this stream only.
				t.replyError(st, pb.Error_MALFORMED, err.Error())
			}
			t.drop(s)
			return
		}
		t.handlers.Receive(s.key.peer, s.key.proto, env)
	}
}

// replyError writes one Error envelope directly on st, best effort.
func (t *Transport) replyError(st network.Stream, code pb.Error_Code, text string) {
	env := wire.TransportError(code, text)
	_ = st.SetWriteDeadline(time.Now().Add(t.cfg.WriteTimeout))
	_ = wire.WriteFrame(st, env, t.cfg.MaxMessage)
}

// drop ends a session: its stream is reset and, if it is the registered one, a
// later Send opens a new stream.
func (t *Transport) drop(s *session) {
	s.once.Do(func() {
		close(s.done)
		t.mu.Lock()
		if t.sessions[s.key] == s {
			delete(t.sessions, s.key)
		}
		st := s.stream
		t.mu.Unlock()
		if st != nil {
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
