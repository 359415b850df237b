package serve

import (
	"context"
	"encoding/json"
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
	waitUntil(t, "the stream's place freed", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.pending == 0
	})
}
