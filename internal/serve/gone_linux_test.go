package serve

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/exopower/exopower/internal/sampler"
)

// These tests lean on Linux's TCP: its state of a connection (TCP_INFO),
// and the reset it sends for a connection closed with data unread, which
// macOS does not send.

// listening serves s as exopower serve does, on a loopback port, and
// returns the address and the Listener, whose places held tell how many
// connections serve has not closed yet.
func listening(t *testing.T, s *Server) (string, *Listener) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs, l := s.HTTPServer(time.Second), Listen(ln, 8)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Serve(hs, l)
	}()
	t.Cleanup(func() {
		hs.Close()
		<-done
	})
	return ln.Addr().String(), l
}

// heldMeter is a Meter whose Begin, once entered, waits until the test
// lets it go, as a Begin waiting for its sample does, and only then
// looks at the request's context.
type heldMeter struct {
	Meter
	entered chan struct{}
	release chan struct{}
}

func (m *heldMeter) Begin(ctx context.Context, onWindow func(sampler.Window, sampler.Totals)) *sampler.Span {
	m.entered <- struct{}{}
	<-m.release
	return m.Meter.Begin(ctx, onWindow)
}

// A client that closes its connection while its span begins gets no
// span, even where net/http does not pass its going on to the request's
// context: here the client had sent the start of its next request (HTTP
// pipelining), after which net/http reads no more until the answer is
// written. serve asks the kernel whether the client has closed. Before,
// the span was kept, its place held for a day.
func TestAClientGoneBeforeItsAnswerGetsNoSpan(t *testing.T) {
	s, _ := offline(t, newClock(), Config{})
	m := &heldMeter{Meter: s.meter, entered: make(chan struct{}), release: make(chan struct{})}
	s.meter = m
	addr, _ := listening(t, s)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprint(conn, "POST /v1/spans HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n")
	<-m.entered
	// The first byte of a next request, once this one is read: net/http's
	// reading in the background takes it, and stops there.
	fmt.Fprint(conn, "G")
	tc := conn.(*net.TCPConn)
	tc.CloseWrite()
	waitUntil(t, "serve's side to take the client's close", func() bool { return tcpState(t, tc) == finWait2 })
	close(m.release)
	// The span is kept or not as it stops being counted as being opened.
	waitUntil(t, "the span's begin to be done", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.pending == 0
	})
	if n := s.holding(); n != 0 {
		t.Errorf("%d spans held for a client that went before its answer, want none", n)
	}
}

// Linux's TCP states (include/net/tcp_states.h).
const finWait2 = 5

// tcpState is the state of c in Linux's TCP.
func tcpState(t *testing.T, c *net.TCPConn) uint8 {
	t.Helper()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var info *unix.TCPInfo
	rc.Control(func(fd uintptr) { info, err = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO) })
	if err != nil {
		t.Fatal(err)
	}
	return info.State
}

// unread is a client's connection that the client does not get round to
// reading: its first Read takes one byte, when the answer has come, says
// so, and leaves the rest unread until the connection is closed.
type unread struct {
	net.Conn
	arrived          chan struct{}
	closed           chan struct{}
	first, closeOnce sync.Once
}

func (u *unread) Read(b []byte) (int, error) {
	var err error
	u.first.Do(func() {
		_, err = u.Conn.Read(make([]byte, 1))
		close(u.arrived)
	})
	if err != nil {
		return 0, err
	}
	<-u.closed
	return 0, net.ErrClosed
}

func (u *unread) Close() error {
	u.closeOnce.Do(func() { close(u.closed) })
	return u.Conn.Close()
}

// A client that gives up as its span's answer comes, before it reads it
// (a timeout, the answer late behind a sample), leaves no span: its
// system resets the connection, the answer unread, and serve, which
// watches the connection until the client asks again, ends the span. A
// client that read its answer keeps its span, whether it then goes or
// asks again and goes. Before, the span was kept for a day.
func TestAClientThatGivesUpAsItsAnswerComesLeavesNoSpan(t *testing.T) {
	for _, tc := range []struct {
		name   string
		client func(t *testing.T, addr string)
		spans  int
	}{
		{"a client that times out with the answer unread leaves none", timesOut, 0},
		{"a client that read the answer and went keeps its span", func(t *testing.T, addr string) {
			conn := rawAsk(t, addr, true)
			conn.Close()
		}, 1},
		{"a client that read it, asked again and went with that answer unread keeps it", func(t *testing.T, addr string) {
			conn := rawAsk(t, addr, true)
			fmt.Fprint(conn, "GET /v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
			conn.Read(make([]byte, 1))
			conn.Close()
		}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := offline(t, newClock(), Config{})
			addr, l := listening(t, s)
			tc.client(t, addr)
			waitUntil(t, "serve to close the connection", func() bool { return len(l.places) == 0 })
			if n := s.holding(); n != tc.spans {
				t.Errorf("%d spans held, want %d", n, tc.spans)
			}
		})
	}
}

// timesOut opens a span with Go's HTTP client, and cancels the request,
// as its timeout would, once the answer is on this machine, unread.
func timesOut(t *testing.T, addr string) {
	arrived := make(chan struct{})
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &unread{Conn: c, arrived: arrived, closed: make(chan struct{})}, nil
	}}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/v1/spans", nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	<-arrived
	cancel()
	if err := <-done; err == nil {
		t.Fatal("the request went through")
	}
}

// rawAsk opens a span on a connection of its own and, when read is set,
// reads the answer whole; it returns the connection, kept open.
func rawAsk(t *testing.T, addr string, read bool) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(conn, "POST /v1/spans HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n")
	if read {
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("POST /v1/spans: %s", resp.Status)
		}
	}
	return conn
}
