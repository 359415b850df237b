package serve

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/sampler"
)

// endsAtOnce is a Meter whose spans end at once, without waiting for the
// window that covers the end: what is counted here is the asking.
type endsAtOnce struct{ Meter }

func (endsAtOnce) End(context.Context, *sampler.Span, time.Time) sampler.Result {
	return sampler.Result{}
}

// Served counts the requests that passed the gate, the spans opened and
// ended, and those still open, for the line serve ends with.
func TestServedCountsWhatWasAnswered(t *testing.T) {
	s, _ := offline(t, newClock(), Config{})
	s.meter = endsAtOnce{s.meter}
	h := s.Handler()
	if got := s.Served(); got != (Served{}) {
		t.Fatalf("before any request: %+v", got)
	}
	ended, kept := mustOpen(t, h), mustOpen(t, h)
	for _, req := range []*http.Request{
		httptest.NewRequest(http.MethodPost, "/v1/spans/"+ended+"/end", nil),
		httptest.NewRequest(http.MethodGet, "/v1/spans/"+kept, nil),
		httptest.NewRequest(http.MethodGet, "/v1/status", nil),
		httptest.NewRequest(http.MethodGet, "/nowhere", nil),
		httptest.NewRequest(http.MethodPost, "/v1/spans/"+ended+"/end", nil), // ended already: 404
	} {
		serveLocal(h, req)
	}
	// Refused at the gate (a Host that is not this machine's): not
	// answered, not counted.
	req := httptest.NewRequest(http.MethodGet, "/v1/status", nil)
	req.Host = "attacker.example"
	if rec := serveLocal(h, req); rec.Code != http.StatusForbidden {
		t.Fatalf("a request for another Host: %d, want 403", rec.Code)
	}
	want := Served{Requests: 7, Opened: 2, Ended: 1, Open: 1}
	if got := s.Served(); got != want {
		t.Errorf("Served() = %+v, want %+v", got, want)
	}
}
