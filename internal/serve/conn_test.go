package serve

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// serveHTTP serves s as exopower serve does, through HTTPServer, Listen
// with at most max connections and Serve, on a loopback port; it returns
// the address.
func serveHTTP(t *testing.T, s *Server, max int) string {
	t.Helper()
	return serveHTTPWith(t, s, max, nil)
}

// serveHTTPWith is serveHTTP with the http.Server changed by change, when
// not nil, before it serves.
func serveHTTPWith(t *testing.T, s *Server, max int, change func(*http.Server)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := s.HTTPServer(time.Second)
	if change != nil {
		change(hs)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Serve(hs, Listen(ln, max))
	}()
	t.Cleanup(func() {
		hs.Close()
		<-done
	})
	return ln.Addr().String()
}

// rawStatus sends req as it is on a connection of its own and returns the
// status code of the answer.
func rawStatus(t *testing.T, addr, req string) int {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// withHeaders is a GET of path whose line and headers, the blank line
// that ends them included, are n bytes in all.
func withHeaders(path string, n int) string {
	head := fmt.Sprintf("GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nX-Pad: ", path)
	return head + strings.Repeat("x", n-len(head)-len("\r\n\r\n")) + "\r\n\r\n"
}

// The headers are at most MaxHeaderBytes, as docs/json/serve-api.md says: net/http
// allows 4096 bytes beyond its own MaxHeaderBytes, which serve takes off.
func TestHeadersOfTheLimitAreReadAndOneByteMoreIsRefused(t *testing.T) {
	s, _ := offline(t, newClock(), Config{})
	addr := serveHTTP(t, s, DefaultMaxConnections)
	if code := rawStatus(t, addr, withHeaders("/v1/status", MaxHeaderBytes)); code != http.StatusOK {
		t.Errorf("headers of %d bytes: %d, want 200", MaxHeaderBytes, code)
	}
	if code := rawStatus(t, addr, withHeaders("/v1/status", MaxHeaderBytes+1)); code != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("headers of %d bytes: %d, want 431", MaxHeaderBytes+1, code)
	}
}

func TestTheConnectionsAreCappedAtHalfTheOpenFiles(t *testing.T) {
	for _, tt := range []struct {
		name    string
		want    int
		nofile  uint64
		got     int
		lowered bool
	}{
		{"the default under a limit of many files", 512, 1 << 20, 512, false},
		{"the default at 1024 files, exactly half", 512, 1024, 512, false},
		{"the default at macOS's 256 files", 512, 256, 128, true},
		{"a wish under half", 100, 256, 100, false},
		{"one file still lets one in", 512, 1, 1, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, lowered := MaxConnections(tt.want, tt.nofile)
			if got != tt.got || lowered != tt.lowered {
				t.Errorf("MaxConnections(%d, %d) = %d, %v; want %d, %v", tt.want, tt.nofile, got, lowered, tt.got, tt.lowered)
			}
		})
	}
}

// Every refusal closes its connection (Connection: close): a client
// without the password kept its connection after a 401, and one such
// client held all --web.max-connections by asking again before
// IdleTimeout, while Prometheus waited in the kernel's queue until its
// scrape timed out.
func TestARefusalClosesItsConnection(t *testing.T) {
	users, _ := offline(t, newClock(), Config{Web: loadWebConfig(t, writeWebConfig(t, usersLine(t, "prom", "s3cret")))})
	none, _ := offline(t, newClock(), Config{})
	withUsers, without := serveHTTP(t, users, 4), serveHTTP(t, none, 4)
	for _, tt := range []struct {
		name, addr, request string
		want                int
	}{
		{"no password", withUsers, "GET /metrics HTTP/1.1\r\nHost: mac1\r\n\r\n", http.StatusUnauthorized},
		{"a wrong password", withUsers, "GET /metrics HTTP/1.1\r\nHost: mac1\r\nAuthorization: Basic cHJvbTp3cm9uZw==\r\n\r\n", http.StatusUnauthorized},
		{"a Host not of this machine", without, "GET /metrics HTTP/1.1\r\nHost: evil.example\r\n\r\n", http.StatusForbidden},
		{"a page of another origin", without, "POST /v1/spans HTTP/1.1\r\nHost: 127.0.0.1\r\nSec-Fetch-Site: cross-site\r\nContent-Length: 0\r\n\r\n", http.StatusForbidden},
		{"no such endpoint", without, "GET /v2 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", http.StatusNotFound},
	} {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", tt.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := conn.Write([]byte(tt.request)); err != nil {
				t.Fatal(err)
			}
			r := bufio.NewReader(conn)
			resp, err := http.ReadResponse(r, nil)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.want || !resp.Close {
				t.Fatalf("%d, Connection %q; want %d, Connection close", resp.StatusCode, resp.Header.Get("Connection"), tt.want)
			}
			// A minute guards against a hang; serve closes at once.
			conn.SetReadDeadline(time.Now().Add(time.Minute))
			if n, err := r.Read(make([]byte, 1)); err != io.EOF {
				t.Errorf("after the answer: %d bytes, %v; want the connection closed", n, err)
			}
		})
	}
}

// At the cap, the connection idle the longest between requests is closed
// to make room for the next: connections kept alive no longer keep
// Prometheus out while they idle. Here nothing times out for an hour, so
// that only that can let the next client in; connections opened and
// silent are left alone (a client's request may be on its way), and end
// at ReadHeaderTimeout.
func TestAtTheCapAnIdleConnectionMakesRoomForTheNext(t *testing.T) {
	const max = 4
	for _, tt := range []struct {
		name      string
		passwords bool // the web config sets them
		silent    int  // connections opened and silent, the rest idle after an answer
	}{
		{"idle clients of this machine, which needs no password", false, 0},
		{"a Prometheus idle, and clients that say nothing", true, max - 1},
		{"Prometheus, and another with the password", true, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			users := "basic_auth_users: {}"
			if tt.passwords {
				users = usersLine(t, "prom", "s3cret")
			}
			s, _ := offline(t, newClock(), Config{Web: loadWebConfig(t, writeWebConfig(t, users))})
			addr := serveHTTPWith(t, s, max, func(hs *http.Server) {
				hs.ReadHeaderTimeout, hs.ReadTimeout, hs.IdleTimeout = time.Hour, time.Hour, time.Hour
			})
			auth := ""
			if tt.passwords {
				auth = "Authorization: Basic cHJvbTpzM2NyZXQ=\r\n" // prom:s3cret
			}
			for i := range max {
				conn, err := net.Dial("tcp", addr)
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close()
				if i < tt.silent {
					continue
				}
				// Served, and idle: kept alive.
				fmt.Fprintf(conn, "GET /v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\n%s\r\n", auth)
				resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || resp.Close {
					t.Fatalf("%d, Connection %q; want 200, kept alive", resp.StatusCode, resp.Header.Get("Connection"))
				}
			}
			req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/metrics", nil)
			if tt.passwords {
				req.SetBasicAuth("prom", "s3cret")
			}
			// A minute guards against a hang: the client waits on nothing.
			client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{DisableKeepAlives: true}}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatalf("the next client, %d connections held: %v", max, err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("the next client: %d, want 200", resp.StatusCode)
			}
		})
	}
}
