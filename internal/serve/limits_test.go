package serve

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/sampler"
	"github.com/exopower/exopower/internal/wire"
)

// errorBody checks that rec holds a JSON error with the status code, and
// returns its message.
func errorBody(t *testing.T, rec *httptest.ResponseRecorder, code int) string {
	t.Helper()
	if rec.Code != code {
		t.Fatalf("status %d, want %d; body %s", rec.Code, code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	var e wire.Error
	if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil {
		t.Fatalf("error body %q: %v", rec.Body, err)
	}
	if e.Status != code || e.Error == "" {
		t.Errorf("error body %+v: want status %d and a message", e, code)
	}
	return e.Error
}

// mustOpen opens a span through h and returns its id.
func mustOpen(t testing.TB, h http.Handler) string {
	t.Helper()
	rec := serveLocal(h, httptest.NewRequest(http.MethodPost, "/v1/spans", nil))
	if rec.Code != http.StatusCreated {
		t.Fatalf("POST /v1/spans: %d %s", rec.Code, rec.Body)
	}
	var o wire.Opened
	if err := json.Unmarshal(rec.Body.Bytes(), &o); err != nil || o.ID == "" {
		t.Fatalf("POST /v1/spans: %q, %v", rec.Body, err)
	}
	if loc := rec.Header().Get("Location"); loc != "/v1/spans/"+o.ID {
		t.Errorf("Location %q, want /v1/spans/%s", loc, o.ID)
	}
	return o.ID
}

func TestUnknownPathsAreNotFoundInJSON(t *testing.T) {
	s, _ := offline(t, newClock(), Config{})
	h := s.Handler()
	id := mustOpen(t, h)
	for _, path := range []string{
		"/", "/metric", "/metrics/", "/v1", "/v1/status/x", "/v1/spans/",
		"/v1/spans//end", "/v1/spans/" + id + "/stop", "/v1/spans/" + id + "/end/more", "/v2/spans",
	} {
		t.Run(path, func(t *testing.T) {
			msg := errorBody(t, serveLocal(h, httptest.NewRequest(http.MethodGet, path, nil)), http.StatusNotFound)
			if !strings.Contains(msg, path) {
				t.Errorf("error %q does not name the path", msg)
			}
		})
	}
}

func TestAnUnknownSpanIsNotFound(t *testing.T) {
	s, _ := offline(t, newClock(), Config{})
	h := s.Handler()
	for _, req := range []*http.Request{
		httptest.NewRequest(http.MethodGet, "/v1/spans/0123456789abcdef01234567", nil),
		httptest.NewRequest(http.MethodPost, "/v1/spans/0123456789abcdef01234567/end", nil),
	} {
		msg := errorBody(t, serveLocal(h, req), http.StatusNotFound)
		if !strings.Contains(msg, "0123456789abcdef01234567") {
			t.Errorf("%s %s: error %q does not name the span", req.Method, req.URL, msg)
		}
	}
}

func TestAWrongMethodIsRefusedWithAllow(t *testing.T) {
	s, _ := offline(t, newClock(), Config{})
	h := s.Handler()
	id := mustOpen(t, h)
	for _, tt := range []struct{ method, path, allow string }{
		{http.MethodPost, "/metrics", "GET"},
		{http.MethodDelete, "/v1/status", "GET"},
		{http.MethodGet, "/v1/spans", "POST"},
		{http.MethodPut, "/v1/spans/" + id, "GET"},
		{http.MethodGet, "/v1/spans/" + id + "/end", "POST"},
		{http.MethodPost, "/v1/windows", "GET"},
	} {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			rec := serveLocal(h, httptest.NewRequest(tt.method, tt.path, nil))
			msg := errorBody(t, rec, http.StatusMethodNotAllowed)
			if got := rec.Header().Get("Allow"); got != tt.allow {
				t.Errorf("Allow %q, want %q", got, tt.allow)
			}
			if !strings.Contains(msg, tt.allow) {
				t.Errorf("error %q does not say which method to use", msg)
			}
		})
	}
}

func TestABodyOverTheLimitIsRefused(t *testing.T) {
	s, _ := offline(t, newClock(), Config{})
	h := s.Handler()
	rec := serveLocal(h, httptest.NewRequest(http.MethodPost, "/v1/spans", strings.NewReader(strings.Repeat("x", MaxBody+1))))
	if msg := errorBody(t, rec, http.StatusRequestEntityTooLarge); !strings.Contains(msg, "4096 bytes") {
		t.Errorf("error %q does not say the limit", msg)
	}
	id := mustOpen(t, h)
	rec = serveLocal(h, httptest.NewRequest(http.MethodPost, "/v1/spans/"+id+"/end", strings.NewReader(strings.Repeat("x", 1<<20))))
	errorBody(t, rec, http.StatusRequestEntityTooLarge)
	// A body at the limit is read and ignored.
	rec = serveLocal(h, httptest.NewRequest(http.MethodPost, "/v1/spans", strings.NewReader(strings.Repeat("x", MaxBody))))
	if rec.Code != http.StatusCreated {
		t.Errorf("a body of %d bytes: %d %s, want 201", MaxBody, rec.Code, rec.Body)
	}
}

// Spans are for this machine unless the web config demands passwords;
// metrics and status are for everyone.
func TestSpansAreServedToThisMachineOnly(t *testing.T) {
	for _, tt := range []struct {
		name      string
		remote    string
		passwords bool
		spans     int // the status of POST /v1/spans
	}{
		{"a client on another machine may not open spans", "192.0.2.7:40000", false, http.StatusForbidden},
		{"nor one on another machine over IPv6", "[2001:db8::1]:40000", false, http.StatusForbidden},
		{"a client on this machine may", "127.0.0.1:40000", false, http.StatusCreated},
		{"so may one on IPv6 loopback", "[::1]:40000", false, http.StatusCreated},
		{"a client the web config let in may, from anywhere", "192.0.2.7:40000", true, http.StatusCreated},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var cfg Config
			if tt.passwords {
				cfg.Web = loadWebConfig(t, writeWebConfig(t, usersLine(t, "prom", "s3cret")))
			}
			s, _ := offline(t, newClock(), cfg)
			h := s.Handler()
			do := func(method, path string) *httptest.ResponseRecorder {
				req := httptest.NewRequest(method, path, nil)
				req.SetBasicAuth("prom", "s3cret")
				return serveFrom(h, req, tt.remote)
			}
			id := func() string { // opened from this machine
				rec := do(http.MethodPost, "/v1/spans")
				var o wire.Opened
				if err := json.Unmarshal(rec.Body.Bytes(), &o); err != nil || o.ID == "" {
					t.Fatalf("POST /v1/spans: %d %q, %v", rec.Code, rec.Body, err)
				}
				return o.ID
			}
			if !tt.passwords {
				id = func() string { return mustOpen(t, h) }
			}
			sp := id()
			for _, path := range []string{"/metrics", "/v1/status"} {
				if rec := do(http.MethodGet, path); rec.Code != http.StatusOK {
					t.Errorf("GET %s: %d, want 200", path, rec.Code)
				}
			}
			if tt.spans == http.StatusForbidden {
				for _, r := range []struct{ method, path string }{
					{http.MethodPost, "/v1/spans"}, {http.MethodGet, "/v1/spans/" + sp}, {http.MethodPost, "/v1/spans/" + sp + "/end"},
					{http.MethodGet, "/v1/windows"},
				} {
					msg := errorBody(t, do(r.method, r.path), http.StatusForbidden)
					if !strings.Contains(msg, "--web.config.file") {
						t.Errorf("%s %s: error %q does not say how to allow it", r.method, r.path, msg)
					}
				}
				return
			}
			if rec := do(http.MethodPost, "/v1/spans"); rec.Code != tt.spans {
				t.Errorf("POST /v1/spans: %d %s, want %d", rec.Code, rec.Body, tt.spans)
			}
			if rec := do(http.MethodGet, "/v1/spans/"+sp); rec.Code != http.StatusOK {
				t.Errorf("GET /v1/spans/ID: %d %s, want 200", rec.Code, rec.Body)
			}
			if rec := do(http.MethodPost, "/v1/spans/"+sp+"/end"); rec.Code != http.StatusOK {
				t.Errorf("POST /v1/spans/ID/end: %d %s, want 200", rec.Code, rec.Body)
			}
		})
	}
}

func TestTheOpenSpansAreBounded(t *testing.T) {
	s, _ := offline(t, newClock(), Config{})
	h := s.Handler()
	ids := make([]string, 0, MaxOpenSpans)
	for range MaxOpenSpans {
		ids = append(ids, mustOpen(t, h))
	}
	rec := serveLocal(h, httptest.NewRequest(http.MethodPost, "/v1/spans", nil))
	if msg := errorBody(t, rec, http.StatusTooManyRequests); !strings.Contains(msg, "1024") || !strings.Contains(msg, "end some") {
		t.Errorf("error %q: want the limit and what to do", msg)
	}
	// A stream of windows holds a span too.
	rec = serveLocal(h, httptest.NewRequest(http.MethodGet, "/v1/windows", nil))
	if msg := errorBody(t, rec, http.StatusTooManyRequests); !strings.Contains(msg, "1024") || !strings.Contains(msg, "end some") {
		t.Errorf("a stream refused with %q: want the limit and what to do", msg)
	}
	// Ending one makes room for one.
	if rec := serveLocal(h, httptest.NewRequest(http.MethodPost, "/v1/spans/"+ids[0]+"/end", nil)); rec.Code != http.StatusOK {
		t.Fatalf("end: %d %s", rec.Code, rec.Body)
	}
	mustOpen(t, h)
	errorBody(t, serveLocal(h, httptest.NewRequest(http.MethodPost, "/v1/spans", nil)), http.StatusTooManyRequests)
}

// endCounter is a Meter that counts the spans it was asked to end.
type endCounter struct {
	Meter
	ended map[*sampler.Span]bool
}

func (e *endCounter) End(ctx context.Context, sp *sampler.Span, end time.Time) sampler.Result {
	e.ended[sp] = true
	return e.Meter.End(ctx, sp, end)
}

func TestASpanLeftOpenExpires(t *testing.T) {
	c := newClock()
	s, _ := offline(t, c, Config{})
	counter := &endCounter{Meter: s.meter, ended: map[*sampler.Span]bool{}}
	s.meter = counter
	h := s.Handler()
	old := mustOpen(t, h)
	c.advance(SpanTTL - time.Hour)
	young := mustOpen(t, h)
	if n := s.Expire(); n != 0 {
		t.Fatalf("%d spans expired before their time", n)
	}
	c.advance(time.Hour + time.Nanosecond)
	oldSpan := s.spans[old].span
	if n := s.Expire(); n != 1 {
		t.Fatalf("%d spans expired, want the one open for more than %v", n, SpanTTL)
	}
	if !counter.ended[oldSpan] {
		t.Errorf("the expired span was not ended in the stream: it would go on taking note of every window")
	}
	for _, req := range []*http.Request{
		httptest.NewRequest(http.MethodGet, "/v1/spans/"+old, nil),
		httptest.NewRequest(http.MethodPost, "/v1/spans/"+old+"/end", nil),
	} {
		if msg := errorBody(t, serveLocal(h, req), http.StatusNotFound); !strings.Contains(msg, "expired") {
			t.Errorf("%s %s: %q does not say it may have expired", req.Method, req.URL, msg)
		}
	}
	if rec := serveLocal(h, httptest.NewRequest(http.MethodGet, "/v1/spans/"+young, nil)); rec.Code != http.StatusOK {
		t.Errorf("the younger span: %d %s", rec.Code, rec.Body)
	}
	var st wire.Status
	if err := json.Unmarshal(serveLocal(h, httptest.NewRequest(http.MethodGet, "/v1/status", nil)).Body.Bytes(), &st); err != nil || st.OpenSpans != 1 {
		t.Errorf("status: %d open spans (%v), want 1", st.OpenSpans, err)
	}
}

// The end of a span waits for the window that covers it for one interval
// and the grace at most; then it answers with what was measured, and says
// what was not.
func TestAnEndWhoseWindowNeverComesAnswersWithWhatWasMeasured(t *testing.T) {
	c := newClock()
	s, f := offline(t, c, Config{})
	h := s.Handler()
	id := mustOpen(t, h)
	c.advance(100 * time.Millisecond)
	f.ch <- sample(0, c.Now(), 100*time.Millisecond)
	c.advance(50 * time.Millisecond)
	// No more windows come: the stream is stalled.
	done := make(chan *httptest.ResponseRecorder, 1)
	go func() { done <- serveLocal(h, httptest.NewRequest(http.MethodPost, "/v1/spans/"+id+"/end", nil)) }()
	var rec *httptest.ResponseRecorder
	select {
	case rec = <-done:
	case <-time.After(time.Minute): // a guard against a hang, not a limit on speed
		t.Fatal("the end of a span still waits for its window a minute on")
	}
	var r reading
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil || rec.Code != http.StatusOK {
		t.Fatalf("end: %d %s", rec.Code, rec.Body)
	}
	if r.Samples != 1 || relErr(float64(r.Coverage), 100.0/150) > 1e-9 || relErr(float64(r.EnergyJoules.Total), 0.75) > 1e-9 ||
		len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "no window covered the last 50ms of the span in time") {
		t.Errorf("end of a stalled stream: %d windows, coverage %v, %v J, warnings %q", r.Samples, r.Coverage, r.EnergyJoules.Total, r.Warnings)
	}
}

// A client that goes away while its span begins never learns the span's
// id: the span must not stay open for a day, counted against the limit.
func TestASpanWhoseClientLeftBeforeItWasOpenIsNotKept(t *testing.T) {
	s, _ := offline(t, newClock(), Config{})
	counter := &endCounter{Meter: s.meter, ended: map[*sampler.Span]bool{}}
	s.meter = counter
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	serveLocal(s.Handler(), httptest.NewRequest(http.MethodPost, "/v1/spans", nil).WithContext(ctx))
	s.mu.Lock()
	open, pending := len(s.spans), s.pending
	s.mu.Unlock()
	if open != 0 || pending != 0 {
		t.Errorf("%d spans open, %d pending, after the client left: want none", open, pending)
	}
	if len(counter.ended) != 1 {
		t.Errorf("%d spans ended in the stream, want the one begun", len(counter.ended))
	}
}

// A source gone silent leaves no power gauge behind: once the last window
// is older than the stale bound, the power gauges are left out of
// /metrics (the counters and the last window's time stay), and they come
// back with the next window.
func TestPowerGaugesGoWhenTheSourceFallsSilent(t *testing.T) {
	c := newClock()
	s, f := offline(t, c, Config{})
	h := s.Handler()
	c.advance(100 * time.Millisecond)
	f.ch <- sample(0, c.Now(), 100*time.Millisecond)
	for s.meter.Totals().Windows < 1 {
		time.Sleep(time.Millisecond)
	}
	scrape := func() string {
		rec := serveLocal(h, request{"GET", "/metrics", nil}.to("127.0.0.1:10241"))
		if rec.Code != http.StatusOK {
			t.Fatalf("GET /metrics: %d %s", rec.Code, rec.Body)
		}
		return rec.Body.String()
	}
	if body := scrape(); !strings.Contains(body, "\nexopower_soc_power_watts 7.5\n") {
		t.Fatalf("a fresh window: no soc_power_watts of 7.5 in\n%s", body)
	}
	c.advance(s.stale() + time.Millisecond)
	body := scrape()
	for _, gone := range []string{"\nexopower_soc_power_watts ", "\nexopower_power_watts{"} {
		if strings.Contains(body, gone) {
			t.Errorf("the source silent past %v: %q still published", s.stale(), strings.TrimSpace(gone))
		}
	}
	for _, kept := range []string{"\nexopower_soc_energy_joules_total ", "\nexopower_last_sample_timestamp_seconds "} {
		if !strings.Contains(body, kept) {
			t.Errorf("the source silent: %q gone, want it kept", strings.TrimSpace(kept))
		}
	}
	f.ch <- sample(1, c.Now(), 100*time.Millisecond)
	for s.meter.Totals().Windows < 2 {
		time.Sleep(time.Millisecond)
	}
	if body := scrape(); !strings.Contains(body, "\nexopower_soc_power_watts ") {
		t.Errorf("a window again: no soc_power_watts")
	}
}
