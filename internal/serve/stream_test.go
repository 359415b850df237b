package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/wire"
)

// GET /v1/windows streams a line per window as it comes, with the node's
// name and the energy since the stream began; a client that goes away
// frees the stream's place among the open spans.
func TestTheWindowsStreamAsTheyCome(t *testing.T) {
	c := newClock()
	s, f := offline(t, c, Config{})
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/v1/windows", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || ct != "application/x-ndjson" {
		t.Fatalf("GET /v1/windows: %s, %q", resp.Status, ct)
	}
	dec := json.NewDecoder(resp.Body)
	for i := range 3 {
		c.advance(100 * time.Millisecond)
		f.ch <- sample(i, c.Now(), 100*time.Millisecond)
		var l wire.SampleLine
		if err := dec.Decode(&l); err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		if want := 0.75 * float64(i+1); l.Type != "sample" || l.Node != "test-node" || relErr(float64(l.EnergyJoules.Total), want) > 1e-9 ||
			l.PowerWatts.Total != 7.5 || relErr(float64(l.WindowSeconds), 0.1) > 1e-9 || l.Time != c.Now().Format(time.RFC3339Nano) {
			t.Errorf("line %d: %+v; want %v J so far", i, l, want)
		}
	}
	cancel()
	waitUntil(t, "the stream's place freed", func() bool { return s.holding() == 0 })
}

// A client that asks for the windows and then never reads is dropped
// after a bounded number of lines, and its place freed: serve's kernel
// holds SendBuffer bytes of it (twice that, as Linux counts), the
// client's kernel what its receive buffer takes (128 KiB by default, not
// grown while nothing is read), and then the next line waits the
// interval + 10 s. Without the small send buffer, Linux grows a loopback
// connection's to 4 MiB, some 6,400 lines of 600 bytes, before a write
// waits at all.
func TestAStreamWhoseClientNeverReadsIsDropped(t *testing.T) {
	c := newClock()
	s, f := offline(t, c, Config{})
	addr := serveHTTP(t, s, DefaultMaxConnections)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /v1/windows HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
	waitUntil(t, "the stream to open", func() bool { return s.holding() == 1 })
	// A window every 5 ms, as a source would give them: the stream
	// writes each as it comes until the buffers are full (a feed that
	// fell 64 behind would skip some). Some 240 lines fill them; the
	// interval + 10 s (10.1 s) is about 2,000 more.
	const bound = 4000
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	n := 0
	for ; s.holding() != 0; n++ {
		if n == bound {
			t.Fatalf("%d windows on, the stream whose client never reads is still open", n)
		}
		<-tick.C
		c.advance(100 * time.Millisecond)
		f.ch <- sample(n, c.Now(), 100*time.Millisecond)
	}
	t.Logf("the stream was dropped after %d windows", n)
}

// A stream of windows holds a place among the MaxOpenSpans, and the
// status and the metrics say so: open_streams beside open_spans, which
// together reach the limit.
func TestTheStreamsAreCountedBesideTheSpans(t *testing.T) {
	s, _ := offline(t, newClock(), Config{})
	h := s.Handler()
	ts := httptest.NewServer(h)
	defer ts.Close()
	for range MaxOpenSpans - 1 {
		mustOpen(t, h)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/v1/windows", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/windows: %s", resp.Status)
	}
	if code := call(t, http.MethodPost, ts.URL+"/v1/spans", nil); code != http.StatusTooManyRequests {
		t.Errorf("POST /v1/spans with %d spans and a stream open: %d, want 429", MaxOpenSpans-1, code)
	}
	counts := func() (status map[string]any, m metrics) {
		t.Helper()
		if code := call(t, http.MethodGet, ts.URL+"/v1/status", &status); code != http.StatusOK {
			t.Fatalf("GET /v1/status: %d", code)
		}
		m, err := scrape(ts.URL)
		if err != nil {
			t.Fatal(err)
		}
		return status, m
	}
	st, m := counts()
	if st["open_spans"] != float64(MaxOpenSpans-1) || st["open_streams"] != 1.0 ||
		m["exopower_open_spans"] != MaxOpenSpans-1 || m["exopower_open_streams"] != 1 {
		t.Errorf("status open_spans %v, open_streams %v; metrics %v and %v; want %d and 1",
			st["open_spans"], st["open_streams"], m["exopower_open_spans"], m["exopower_open_streams"], MaxOpenSpans-1)
	}
	cancel()
	waitUntil(t, "the stream's place freed", func() bool { return s.holding() == MaxOpenSpans-1 })
	if st, m := counts(); st["open_streams"] != 0.0 || m["exopower_open_streams"] != 0 {
		t.Errorf("the stream gone: status open_streams %v, metric %v; want 0", st["open_streams"], m["exopower_open_streams"])
	}
}
