package serve

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/heavytest"
	"github.com/exopower/exopower/internal/power"
	"github.com/exopower/exopower/internal/powermetrics"
	"github.com/exopower/exopower/internal/sampler"
	"github.com/exopower/exopower/internal/wire"
)

// 100 clients scraping 10 times a second each do not delay sampling: the
// fake's windows of 25 ms stay chained, every document it writes is a
// window, none is refused, and the time covered is the time elapsed. The
// load is counted (each client scrapes 30 times, 100 ms apart), not timed.
func TestHeavyManyScrapersDoNotDelaySampling(t *testing.T) {
	heavytest.Skip(t)
	const clients, scrapes = 100, 30
	const interval = 25 * time.Millisecond
	l := launchFake(t, stepped, interval)
	l.serve(t, l.sup, interval)
	var o wire.Opened
	if code := call(t, http.MethodPost, l.ts.URL+"/v1/spans", &o); code != http.StatusCreated {
		t.Fatalf("POST /v1/spans: %d", code)
	}
	var before wire.Status
	call(t, http.MethodGet, l.ts.URL+"/v1/status", &before)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	defer client.CloseIdleConnections()
	var failed atomic.Int64
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			for range scrapes {
				<-tick.C
				resp, err := client.Get(l.ts.URL + "/metrics")
				if err != nil {
					failed.Add(1)
					continue
				}
				if _, err := io.Copy(io.Discard, resp.Body); err != nil || resp.StatusCode != http.StatusOK {
					failed.Add(1)
				}
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	var after wire.Status
	call(t, http.MethodGet, l.ts.URL+"/v1/status", &after)
	end := getSpan(t, http.MethodPost, l.ts.URL+o.URL+"/end")
	l.meter.Stop()
	tot := l.meter.Totals()

	if n := failed.Load(); n > 0 {
		t.Errorf("%d of %d scrapes failed", n, clients*scrapes)
	}
	// Documents are numbered from 0 as the fake writes them.
	if written := tot.Last.Index + 1; tot.Windows != written || tot.Breaks != 0 || len(tot.Refused) != 0 {
		t.Errorf("the fake wrote %d documents; %d windows, %d breaks, refused %v", written, tot.Windows, tot.Breaks, tot.Refused)
	}
	elapsed := parseTime(t, after.LastWindow.End).Sub(parseTime(t, before.LastWindow.End)).Seconds()
	covered := float64(after.CoveredSeconds - before.CoveredSeconds)
	if relErr(covered, elapsed) > 1e-6 {
		t.Errorf("%.6f s covered of the %.6f s between two windows: they are not chained", covered, elapsed)
	}
	if end.Coverage != 1 || len(end.Warnings) != 0 || end.Samples < 2*scrapes {
		t.Errorf("a span over the load: coverage %v, %d windows, warnings %q", end.Coverage, end.Samples, end.Warnings)
	}
	t.Logf("%d scrapes by %d clients over %.2f s; %d windows in the span, %d in all; covered %.3f s of %.3f s",
		clients*scrapes, clients, float64(end.DurationSeconds), end.Samples, tot.Windows, covered, elapsed)
}

// generated is a Source that makes n windows of 1 ms at once, on a clock
// it moves, once start is closed. It calls hook before each window, with the
// Sampler done with the one before: what a test does there happens
// between windows.
type generated struct {
	n, i  int
	clock *clock
	hook  func(i int)
	start chan struct{}
}

func (g *generated) Next() (power.Sample, error) {
	<-g.start
	if g.i == g.n {
		return power.Sample{}, io.EOF
	}
	g.hook(g.i)
	g.clock.advance(time.Millisecond)
	g.i++
	return sample(g.i-1, g.clock.Now(), time.Millisecond), nil
}
func (g *generated) CanRequestSample() bool { return false }
func (g *generated) RequestSample() error   { return nil }
func (g *generated) Stop() error            { return nil }

func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// TestHeavySoak puts a million windows through a Sampler and a Server, with a
// scrape every 1,000 windows and a span opened, read and ended every
// 10,000, and one span over all of them: memory stays flat, and the
// counters and the long span are exact.
func TestHeavySoak(t *testing.T) {
	heavytest.Skip(t)
	const n = 1_000_000
	c := newClock()
	var h http.Handler
	var heap [2]uint64
	// The hook runs on the Sampler's goroutine: it may report, not stop.
	failures := 0
	fail := func(format string, args ...any) {
		if failures++; failures <= 5 {
			t.Errorf(format, args...)
		}
	}
	g := &generated{n: n, clock: c, start: make(chan struct{}), hook: func(i int) {
		switch {
		case i == 100_000:
			heap[0] = heapInUse()
		case i == n-1:
			heap[1] = heapInUse()
		}
		if i > 0 && i%1000 == 0 {
			rec := serveLocal(h, httptest.NewRequest(http.MethodGet, "/metrics", nil))
			m, err := parseMetrics(rec.Body)
			if err != nil || m["exopower_samples_total"] != float64(i) {
				fail("scrape after %d windows: %v windows, %v", i, m["exopower_samples_total"], err)
			}
		}
		if i > 0 && i%10_000 == 0 {
			var o wire.Opened
			rec := serveLocal(h, httptest.NewRequest(http.MethodPost, "/v1/spans", nil))
			if err := json.Unmarshal(rec.Body.Bytes(), &o); err != nil || rec.Code != http.StatusCreated {
				fail("POST /v1/spans after %d windows: %d %s", i, rec.Code, rec.Body)
				return
			}
			for _, req := range []*http.Request{
				httptest.NewRequest(http.MethodGet, o.URL, nil),
				httptest.NewRequest(http.MethodPost, o.URL+"/end", nil),
			} {
				if rec := serveLocal(h, req); rec.Code != http.StatusOK {
					fail("%s %s: %d", req.Method, req.URL, rec.Code)
				}
			}
		}
	}}
	meter := sampler.Start(g, sampler.Config{Source: "powermetrics", Interval: time.Millisecond, Now: c.Now})
	srv := New(meter, noRestarts{}, Config{Node: "soak", Interval: time.Millisecond, Reasons: powermetrics.Reasons(), Now: c.Now})
	h = srv.Handler()
	all := mustOpen(t, h)
	started := time.Now()
	close(g.start)
	<-meter.Done()
	took := time.Since(started)
	end := serveLocal(h, httptest.NewRequest(http.MethodPost, "/v1/spans/"+all+"/end", nil))
	meter.Stop()

	t.Logf("%d windows in %v; heap in use after 100,000: %d KiB; after %d: %d KiB", n, took.Round(time.Millisecond), heap[0]>>10, n-1, heap[1]>>10)
	if heap[1] > heap[0]+512<<10 {
		t.Errorf("heap grew by %d KiB over %d windows: memory must not grow with the run", (heap[1]-heap[0])>>10, n-100_000)
	}
	var sp reading
	if err := json.Unmarshal(end.Body.Bytes(), &sp); err != nil || end.Code != http.StatusOK {
		t.Fatalf("end of the long span: %d %s", end.Code, end.Body)
	}
	if want := n * 7.5e-3; sp.Samples != n || relErr(float64(sp.EnergyJoules.Total), want) > 1e-9 || sp.Coverage != 1 {
		t.Errorf("the span over all: %d windows, %v J, coverage %v; want %d, %v J, 1", sp.Samples, sp.EnergyJoules.Total, sp.Coverage, n, want)
	}
	m, _ := parseMetrics(serveLocal(h, httptest.NewRequest(http.MethodGet, "/metrics", nil)).Body)
	if m["exopower_samples_total"] != n || relErr(m["exopower_soc_energy_joules_total"], n*7.5e-3) > 1e-9 || relErr(m["exopower_covered_seconds_total"], n*1e-3) > 1e-9 || m["exopower_open_spans"] != 0 {
		t.Errorf("metrics at the end: %v", m)
	}
}
