package serve

import (
	"net"
	"net/http"
	"time"

	"golang.org/x/net/netutil"
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
)

// HTTPServer returns the http.Server that serves s's Handler, with the
// timeouts and limits that docs/json.md states; grace is how long past
// one interval the end of a span waits for the window that covers it.
func (s *Server) HTTPServer(grace time.Duration) *http.Server {
	return &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		// The end of a span waits up to an interval and the grace.
		WriteTimeout: s.cfg.Interval + grace + 10*time.Second,
		IdleTimeout:  2 * time.Minute,
		// net/http reads 4096 bytes beyond MaxHeaderBytes before it
		// answers 431 (room for its buffered reader): without them, the
		// limit is what MaxHeaderBytes says.
		MaxHeaderBytes: MaxHeaderBytes - 4096,
	}
}

// Listen wraps ln as serve listens: at most max connections at once (the
// next waits to be accepted, as with Prometheus's --web.max-connections,
// rather than being refused), each with a send buffer of SendBuffer
// bytes.
func Listen(ln net.Listener, max int) net.Listener {
	return netutil.LimitListener(smallSends{ln}, max)
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
