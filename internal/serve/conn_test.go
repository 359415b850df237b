package serve

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// serveHTTP serves s as exopower serve does, through HTTPServer and
// Listen with at most max connections, on a loopback port; it returns
// the address.
func serveHTTP(t *testing.T, s *Server, max int) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := s.HTTPServer(time.Second)
	done := make(chan struct{})
	go func() {
		defer close(done)
		hs.Serve(Listen(ln, max))
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

// The headers are at most MaxHeaderBytes, as docs/json.md says: net/http
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
