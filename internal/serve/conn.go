package serve

import (
	"context"
	"crypto/tls"
	"errors"
	"log"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"
)

// Limits of the connections and their requests.
const (
	// MaxHeaderBytes bounds a request's line and headers together, in
	// bytes; one more gets 431.
	MaxHeaderBytes = 16 << 10
	// DefaultMaxConnections is how many connections serve holds at once
	// unless told otherwise: Prometheus's own default (its
	// --web.max-connections).
	DefaultMaxConnections = 512
	// SendBuffer is the kernel's send buffer of each connection, in bytes:
	// what serve holds of an answer that its client does not take. Its
	// largest answer, /metrics, is about 11 KiB; the bound matters for a
	// stream of windows whose client has stopped reading, which the
	// default buffers (grown by the kernel, to megabytes) would hold for
	// hours of lines before a write waited, and so before the stream's
	// write deadline could drop it.
	SendBuffer = 16 << 10
	// IdleTimeout is how long a connection is kept between requests.
	IdleTimeout = 75 * time.Second
)

// HTTPServer returns the http.Server that serves s's Handler, with the
// timeouts and limits that docs/json/serve-api.md states; grace is how long past
// one interval the end of a span waits for the window that covers it.
func (s *Server) HTTPServer(grace time.Duration) *http.Server {
	var errs *log.Logger // net/http's own: the standard logger
	if s.cfg.Log != nil {
		// A failed handshake, say, in serve's log with the rest.
		errs = log.New(s.cfg.Log, "exopower serve: ", 0)
	}
	return &http.Server{
		ErrorLog:          errs,
		Handler:           s.Handler(),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		// The end of a span waits up to an interval and the grace.
		WriteTimeout: s.cfg.Interval + grace + 10*time.Second,
		// Longer than Prometheus's default scrape interval (1m), so that
		// its connection is kept between scrapes; an idle connection
		// makes room at the cap (Listener) however long it may idle.
		IdleTimeout: IdleTimeout,
		// net/http reads 4096 bytes beyond MaxHeaderBytes before it
		// answers 431 (room for its buffered reader): without them, the
		// limit is what MaxHeaderBytes says.
		MaxHeaderBytes: MaxHeaderBytes - 4096,
		// Each request knows its connection, to tell whether its
		// client has gone (clientLeft, watchAnswer).
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			return context.WithValue(ctx, connKey{}, c)
		},
	}
}

// connKey marks a request's context with its connection.
type connKey struct{}

// connOf is the connection that r came on, through TLS: a *placed, a
// *net.TCPConn, or nil where the server was not made by HTTPServer.
func connOf(r *http.Request) net.Conn {
	c, _ := r.Context().Value(connKey{}).(net.Conn)
	if t, ok := c.(*tls.Conn); ok {
		return t.NetConn()
	}
	return c
}

// clientLeft reports whether r's client closed its connection, as the
// kernel has it now. net/http cancels a request's context when it reads
// the connection's end, but it reads it only in the background, a moment
// later, and not at all once the client has sent the start of another
// request: a client that timed out just as its span began kept the span.
func clientLeft(r *http.Request) bool {
	c := connOf(r)
	if p, ok := c.(*placed); ok {
		c = p.Conn
	}
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return false
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return false
	}
	left := false
	rc.Control(func(fd uintptr) { left = closedByPeer(fd) })
	return left
}

// watchAnswer has gone called should r's connection be reset before its
// client sends another request on it, and before its FIN: the client
// went without reading the answer about to be written. Its system
// resets the connection when the answer comes to a socket it has closed,
// or (Linux, not macOS) when it closes one that holds the answer unread.
// A client that read the answer and closed the connection ends it with a
// FIN, which leaves the span be; so does one whose FIN comes before its
// reset (it closed as the answer was on its way), which a FIN alone
// cannot tell from the first: its span waits for its lifetime, or, for
// one that names a process, for its tree to be gone. Over HTTP/2, where
// one connection carries many requests, and on a connection not of a
// Listener, nothing is watched.
func watchAnswer(r *http.Request, gone func()) {
	if p, ok := connOf(r).(*placed); ok && r.ProtoMajor == 1 {
		p.mu.Lock()
		p.unread = gone
		p.mu.Unlock()
	}
}

// answerRead takes note that r's client has sent another request on its
// connection, and so was there for the answer before it.
func answerRead(r *http.Request) {
	if p, ok := connOf(r).(*placed); ok {
		p.mu.Lock()
		p.unread = nil
		p.mu.Unlock()
	}
}

// Listener is a listener as serve listens: at most max connections at
// once, each with a send buffer of SendBuffer bytes. At the cap, the next
// connection waits to be served (as with Prometheus's
// --web.max-connections, the rest in the kernel's queue) rather than
// being refused, and the connection idle the longest between requests is
// closed to make room for it: otherwise clients that keep connections
// alive would hold every place while Prometheus waited in the queue until
// its scrape timed out. A connection opened and silent is not closed for
// it: a request may be on its way (a burst of them would close one
// another), and it ends at ReadHeaderTimeout. Server.Serve tracks the
// connections' states (http.Server.ConnState).
type Listener struct {
	net.Listener
	places chan struct{} // one per connection held
	done   chan struct{} // closed with the listener
	close  sync.Once
	wake   chan struct{} // a connection went idle: one may make room

	mu   sync.Mutex
	idle map[net.Conn]time.Time // connections idle between requests, since when
}

// Listen wraps ln as serve listens, with at most max connections at once.
func Listen(ln net.Listener, max int) *Listener {
	return &Listener{
		Listener: smallSends{ln},
		places:   make(chan struct{}, max),
		done:     make(chan struct{}),
		wake:     make(chan struct{}, 1),
		idle:     map[net.Conn]time.Time{},
	}
}

// Accept takes the next connection, and waits for a place for it: at
// the cap, the connection idle the longest is closed to make one, or,
// when none is idle, the next to become idle.
func (l *Listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if err := l.place(); err != nil {
		c.Close()
		return nil, err
	}
	return &placed{Conn: c, l: l}, nil
}

// place takes a place for a connection, closing idle ones at the cap
// until one is free.
func (l *Listener) place() error {
	for {
		select {
		case l.places <- struct{}{}:
			return nil
		case <-l.done:
			return net.ErrClosed
		default:
		}
		l.closeIdlest()
		select {
		case l.places <- struct{}{}:
			return nil
		case <-l.wake:
		case <-l.done:
			return net.ErrClosed
		}
	}
}

// Close closes the listener; Accept then returns net.ErrClosed.
func (l *Listener) Close() error {
	l.close.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// track is the http.Server's ConnState: it notes which connections are
// idle between requests, and since when.
func (l *Listener) track(c net.Conn, state http.ConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if state != http.StateIdle {
		delete(l.idle, c)
		return
	}
	l.idle[c] = time.Now()
	select {
	case l.wake <- struct{}{}:
	default: // a wake is pending: Accept will look at every idle connection
	}
}

// closeIdlest closes the connection idle the longest, if one is idle.
func (l *Listener) closeIdlest() {
	l.mu.Lock()
	var idlest net.Conn
	var since time.Time
	for c, t := range l.idle {
		if idlest == nil || t.Before(since) {
			idlest, since = c, t
		}
	}
	delete(l.idle, idlest)
	l.mu.Unlock()
	if idlest != nil {
		idlest.Close()
	}
}

// placed is a connection that holds a place until it is closed.
type placed struct {
	net.Conn
	l    *Listener
	once sync.Once

	mu     sync.Mutex
	unread func() // watchAnswer's: called should the connection be reset
}

// Read reads the connection, and calls the watch of an answer
// (watchAnswer) should its client have reset it. Reads that time out
// are net/http's own doing (it ends its reading in the background so).
func (c *placed) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	var ne net.Error
	if err != nil && !(errors.As(err, &ne) && ne.Timeout()) {
		c.mu.Lock()
		unread := c.unread
		c.unread = nil
		c.mu.Unlock()
		if unread != nil && errors.Is(err, syscall.ECONNRESET) {
			unread()
		}
	}
	return n, err
}

func (c *placed) Close() error {
	err := c.Conn.Close()
	c.mu.Lock()
	c.unread = nil
	c.mu.Unlock()
	c.once.Do(func() { <-c.l.places })
	return err
}

// smallSends sets each accepted TCP connection's send buffer to
// SendBuffer.
type smallSends struct{ net.Listener }

func (l smallSends) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		// A connection whose buffer could not be set is served all the
		// same: the stream's write deadline still ends it once the
		// buffers are full.
		tc.SetWriteBuffer(SendBuffer)
	}
	return c, err
}

// MaxConnections is the cap on connections for a wish of want and a soft
// limit of nofile open files (RLIMIT_NOFILE): never more than half of
// nofile, so that the source keeps descriptors for its pipes (a
// powermetrics killed must be started again) and the process for its
// files. It reports whether it lowered want.
func MaxConnections(want int, nofile uint64) (int, bool) {
	half := nofile / 2
	if half < 1 {
		half = 1
	}
	if uint64(want) > half {
		return int(half), true
	}
	return want, false
}
