package serve

import (
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/apps"
	"github.com/exopower/exopower/internal/fakepm"
	"github.com/exopower/exopower/internal/wire"
)

// nextWindow moves c a second on and hands the server's stream the
// window k that ends there, without reading the processes over it.
func nextWindow(t *testing.T, s *Server, f *feed, c *clock, k int) {
	t.Helper()
	c.advance(time.Second)
	f.ch <- macSample(k, c.Now())
	waitUntil(t, "the window", func() bool { return s.meter.Totals().Windows == k+1 })
}

// openAppSpan opens a span of app through h, as this Mac's client, and
// returns its URL.
func openAppSpan(t *testing.T, h http.Handler, app string) string {
	t.Helper()
	rec := serveLocal(h, httptest.NewRequest(http.MethodPost, "/v1/spans?app="+url.QueryEscape(app), nil))
	if rec.Code != http.StatusCreated {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	return rec.Header().Get("Location")
}

// wantApp holds a span's app to the figures given, to the nanojoule.
func wantApp(t *testing.T, what string, got *wire.App, cpu, gpu float64, procs, running, reads int) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s: no app", what)
	}
	e := got.EnergyJoules
	if math.Abs(float64(e.CPU)-cpu) > 1e-9 || math.Abs(float64(e.GPU)-gpu) > 1e-9 || math.Abs(float64(e.Total)-cpu-gpu) > 1e-9 ||
		!got.Seen || got.Processes != procs || got.ProcessesRunning != running || got.Reads != reads || got.ReadSeconds != wire.Num(reads) {
		t.Errorf("%s: %+v; want %.9f J CPU, %.9f J GPU, %d processes, %d running, over %d reads of a second", what, *got, cpu, gpu, procs, running, reads)
	}
}

// A span that names Safari over serve --apps of the fake Mac (its rails
// CPU 20 W, GPU 8 W) holds Safari's energy over the span to the
// nanojoule, as the table gives it, beside the node's: open, as of the
// last round, and ended, over every round to the end. One opened at the
// second round holds what Safari's counter, exopower_app_energy_joules_total,
// rose by between the scrapes at that round and at the last.
func TestASpanThatNamesAnAppHoldsItsEnergy(t *testing.T) {
	c := newClock()
	s, f := appsServer(t, c, 2)
	h := s.Handler()
	whole := openAppSpan(t, h, "Safari")
	var at2 map[string]map[string]float64
	var later string
	for k := 1; k <= 5; k++ {
		nextWindow(t, s, f, c, k)
		s.appsRound()
		if k == 2 {
			at2, later = scraped(t, s), openAppSpan(t, h, "Safari")
		}
		if k == 3 {
			var r wire.Reading
			decode(t, serveLocal(h, httptest.NewRequest(http.MethodGet, whole, nil)), &r)
			// Safari 3 W and WebContent 4 W, Networking's 0.5 J read at
			// 3 s from its start at 2.5 s; 0.8 of the GPU's time.
			wantApp(t, "open at 3 s", r.App, 3*7+0.5, 3*6.4, 3, 3, 3)
		}
	}
	at5 := scraped(t, s)
	var r wire.Reading
	decode(t, serveLocal(h, httptest.NewRequest(http.MethodPost, whole+"/end", nil)), &r)
	wantApp(t, "ended at 5 s", r.App, 5*7+0.5, 5*6.4, 3, 2, 5)
	if r.App.Name != "Safari" || math.Abs(float64(r.EnergyJoules.CPU)-100) > 1e-9 || len(r.Warnings) != 0 {
		t.Errorf("app %q, the node's CPU %v J (want 100 J), warnings %q", r.App.Name, r.EnergyJoules.CPU, r.Warnings)
	}
	decode(t, serveLocal(h, httptest.NewRequest(http.MethodPost, later+"/end", nil)), &r)
	wantApp(t, "opened at 2 s", r.App, 3*7+0.5, 3*6.4, 3, 2, 3)
	for _, comp := range []string{"cpu", "gpu"} {
		key := "app=Safari,component=" + comp + ",node_name=mac1"
		rose := at5["exopower_app_energy_joules_total"][key] - at2["exopower_app_energy_joules_total"][key]
		got := map[string]wire.Num{"cpu": r.App.EnergyJoules.CPU, "gpu": r.App.EnergyJoules.GPU}[comp]
		if math.Abs(rose-float64(got)) > 1e-9 {
			t.Errorf("%s: the counter rose by %.12f J, the span has %.12f J", comp, rose, float64(got))
		}
	}
	if s.holding() != 0 || len(s.apps.spans) != 0 {
		t.Errorf("%d spans open, %d of apps", s.holding(), len(s.apps.spans))
	}
}

// A span's end waits for the round that reads the window covering it,
// as the node's figures wait for that window: the app's last round is
// the one at or after the end.
func TestAnAppSpansEndWaitsForTheRoundAtItsEnd(t *testing.T) {
	c := newClock()
	s, f := appsServer(t, c, 2)
	h := s.Handler()
	span := openAppSpan(t, h, "Safari")
	nextWindow(t, s, f, c, 1)
	s.appsRound()
	nextWindow(t, s, f, c, 2)
	done := make(chan *httptest.ResponseRecorder)
	go func() { done <- serveLocal(h, httptest.NewRequest(http.MethodPost, span+"/end", nil)) }()
	waitUntil(t, "the end to wait for the round", func() bool {
		s.apps.pmu.Lock()
		defer s.apps.pmu.Unlock()
		return s.apps.waiting == 1
	})
	select {
	case <-done:
		t.Fatal("the end did not wait for the round")
	default:
	}
	s.appsRound()
	var r wire.Reading
	decode(t, <-done, &r)
	wantApp(t, "ended at 2 s", r.App, 2*7, 2*6.4, 2, 2, 2)
}

// A span of an app that is not running is no error: it says what it
// saw, and which app of that name but for case runs.
func TestASpanOfAnAppNotRunningSaysSo(t *testing.T) {
	c := newClock()
	s, f := appsServer(t, c, 2)
	h := s.Handler()
	span := openAppSpan(t, h, "safari")
	nextWindow(t, s, f, c, 1)
	s.appsRound()
	var r wire.Reading
	decode(t, serveLocal(h, httptest.NewRequest(http.MethodPost, span+"/end", nil)), &r)
	if r.App == nil || r.App.Seen || r.App.Processes != 0 || r.App.EnergyJoules.Total != 0 || r.App.Reads != 1 ||
		len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], `this Mac runs "Safari"`) {
		t.Errorf("app %+v, warnings %q", r.App, r.Warnings)
	}
}

// A span that names an app is refused, with why, where it cannot be
// measured or the client may not ask: as one that names a process.
func TestASpanThatNamesAnAppItCannotMeasureIsRefused(t *testing.T) {
	mac := fakepm.NewMac(fakepm.BusyMac(), nil)
	poller := func() *Apps { return &Apps{Poller: apps.New(mac, mac, apps.Config{}), Top: 2} }
	for _, tc := range []struct {
		query string
		cfg   Config
		code  int
		why   string
	}{
		{"app=Safari&app=Terminal", Config{Apps: poller()}, http.StatusBadRequest, "2 apps named (?app=): a span names one"},
		{"app=", Config{Apps: poller()}, http.StatusBadRequest, "an app's name is empty"},
		{"app=Safari%1b", Config{Apps: poller()}, http.StatusBadRequest, `app=Safari\\x1b: an app's name holds no control character`},
		{"app=Safari", Config{}, http.StatusNotImplemented, "need serve to be started with --apps"},
		{"app=Safari", Config{Apps: poller()}, http.StatusServiceUnavailable, "has not read the processes yet"},
		{"app=Safari", Config{Apps: poller(), Root: true}, http.StatusForbidden, "spans that name an app (?app=) need a password of the web config with the process role"},
		// A query that Go's reading would cut short, or names it does
		// not take: the client asked for what it would not get.
		{"app=Safari;x", Config{Apps: poller()}, http.StatusBadRequest, "the query cannot be read"},
		{"APP=Safari", Config{Apps: poller()}, http.StatusBadRequest, "APP=: a span takes ?pid=N and ?app=NAME, and nothing else"},
		{"app=Safari&label=x", Config{Apps: poller()}, http.StatusBadRequest, "label=: a span takes"},
	} {
		s, _ := offline(t, newClock(), tc.cfg)
		rec := serveLocal(s.Handler(), httptest.NewRequest(http.MethodPost, "/v1/spans?"+tc.query, nil))
		if rec.Code != tc.code || !strings.Contains(rec.Body.String(), tc.why) {
			t.Errorf("%s: %d %s, want %d and %q", tc.query, rec.Code, rec.Body, tc.code, tc.why)
		}
		if s.holding() != 0 {
			t.Errorf("%s: a place held", tc.query)
		}
	}
}
