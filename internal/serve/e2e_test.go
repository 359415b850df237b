package serve

import (
	"encoding/json"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/fakepm"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/power"
	"github.com/exopower/exopower/internal/powermetrics"
	"github.com/exopower/exopower/internal/sampler"
	"github.com/exopower/exopower/internal/wire"
)

// stepped is the power of the fake in these tests: steps that a wrong
// placement or integration of windows would show.
const stepped = "period=0.9 0=5,2,1 0.5=14,6,2.5"

// reading is a span as GET /v1/spans/ID and POST .../end answer it, and
// all its keys.
type reading struct {
	wire.Reading
	keys []string
}

func getSpan(t *testing.T, method, url string) reading {
	t.Helper()
	var raw map[string]json.RawMessage
	if code := call(t, method, url, &raw); code != http.StatusOK {
		t.Fatalf("%s %s: status %d", method, url, code)
	}
	b, _ := json.Marshal(raw)
	var r reading
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	for k := range raw {
		r.keys = append(r.keys, k)
	}
	slices.Sort(r.keys)
	return r
}

// spanKeys are the keys of exopower run --json and those a span adds.
func spanKeys(t *testing.T) []string {
	b, _ := json.Marshal(output.NewSummary(sampler.Result{}, time.Now(), time.Second))
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	keys := []string{"id", "node", "open", "ended_at"}
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func parseTime(t *testing.T, s string) time.Time {
	t.Helper()
	x, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// A span opened and ended over HTTP holds the fake's exact energy over
// [started_at, ended_at]; read while open, over [started_at, started_at +
// duration]. The answers have the fields of run --json and a span's own.
func TestASpanOverHTTPIsTheExactEnergy(t *testing.T) {
	l := startLive(t, stepped, 100*time.Millisecond)
	// The span opens once the stream is settled: the first document can
	// wait longer in the pipe than those after it (the reader is still
	// starting), and the window it is chained to is placed the later for
	// it (fakepm.EnergyLate holds a span to one delay at both its edges).
	waitUntil(t, "5 windows", func() bool { return l.meter.Totals().Windows >= 5 })
	var o wire.Opened
	if code := call(t, http.MethodPost, l.ts.URL+"/v1/spans", &o); code != http.StatusCreated {
		t.Fatalf("POST /v1/spans: %d", code)
	}
	if o.Node != "test-node" || o.URL != "/v1/spans/"+o.ID || len(o.ID) != 24 {
		t.Errorf("opened %+v", o)
	}
	started := parseTime(t, o.StartedAt)
	var sofar reading
	// Long enough that the pipe's delay, by which exopower's timeline
	// trails the fake's clock, is well inside 0.5 % at the edges, and so
	// is the rounding of each window's energy to whole millijoules.
	waitUntil(t, "25 windows in the span", func() bool {
		sofar = getSpan(t, http.MethodGet, l.ts.URL+o.URL)
		return sofar.Samples >= 25
	})
	want := spanKeys(t)
	if !slices.Equal(sofar.keys, want) {
		t.Errorf("an open span's keys %v, want %v", sofar.keys, want)
	}
	if !sofar.Open || sofar.EndedAt != nil || sofar.ID != o.ID || sofar.Node != "test-node" || sofar.Type != "span" || sofar.StartedAt != o.StartedAt {
		t.Errorf("open span: %+v", sofar)
	}
	upTo := started.Add(time.Duration(float64(sofar.DurationSeconds) * 1e9))
	fakepm.HoldEnergy(t, "read so far", sofar.EnergyJoules, l.profile, started, upTo, 0.5)
	// On past another step of the profile before the end.
	waitUntil(t, "50 windows in the span", func() bool { return getSpan(t, http.MethodGet, l.ts.URL+o.URL).Samples >= 50 })
	end := getSpan(t, http.MethodPost, l.ts.URL+o.URL+"/end")
	if !slices.Equal(end.keys, want) {
		t.Errorf("an ended span's keys %v, want %v", end.keys, want)
	}
	if end.Open || end.EndedAt == nil || end.ID != o.ID || end.Coverage != 1 || len(end.Warnings) != 0 || end.Source.HWModel != "MacBookPro17,1" {
		t.Fatalf("ended span: %+v", end)
	}
	ended := parseTime(t, *end.EndedAt)
	// The duration is on the monotonic clock, the edges on the wall
	// clock, which NTP may slew by up to 500 ppm.
	if d := ended.Sub(started).Seconds(); relErr(float64(end.DurationSeconds), d) > 1e-3 {
		t.Errorf("duration %v s, but ended_at - started_at is %v s", end.DurationSeconds, d)
	}
	fakepm.HoldEnergy(t, "ended", end.EnergyJoules, l.profile, started, ended, 0.5)
	t.Logf("span of %.3f s, %d windows: %.4f J", float64(end.DurationSeconds), end.Samples, float64(end.EnergyJoules.Total))
	if code := call(t, http.MethodGet, l.ts.URL+o.URL, nil); code != http.StatusNotFound {
		t.Errorf("GET of an ended span: %d, want 404", code)
	}
}

// The counters hold the fake's exact energy over the windows covered,
// which are chained from the first to the last: what they gain from a
// status read once the stream is settled (see
// TestASpanOverHTTPIsTheExactEnergy) to the last window is the fake's
// energy between the two.
func TestTheCountersAreTheExactEnergy(t *testing.T) {
	l := startLive(t, stepped, 100*time.Millisecond)
	waitUntil(t, "5 windows", func() bool { return l.meter.Totals().Windows >= 5 })
	var before wire.Status
	if code := call(t, http.MethodGet, l.ts.URL+"/v1/status", &before); code != http.StatusOK || before.LastWindow == nil {
		t.Fatalf("status %d: %+v", code, before)
	}
	waitUntil(t, "30 windows", func() bool { return l.meter.Totals().Windows >= 30 })
	// With the stream stopped, the scrape and the status read the same
	// totals.
	l.meter.Stop()
	m, err := scrape(l.ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	var st wire.Status
	if code := call(t, http.MethodGet, l.ts.URL+"/v1/status", &st); code != http.StatusOK || st.LastWindow == nil {
		t.Fatalf("status %d: %+v", code, st)
	}
	first, last := parseTime(t, before.LastWindow.End), parseTime(t, st.LastWindow.End)
	if covered := float64(st.CoveredSeconds - before.CoveredSeconds); relErr(covered, last.Sub(first).Seconds()) > 1e-6 {
		t.Errorf("%.6f s covered of the %.6f s between two windows: they are not chained", covered, last.Sub(first).Seconds())
	}
	gained := func(total, cpu, gpu, ane float64) wire.Components {
		b := before.EnergyJoules
		return wire.Components{Total: wire.Num(total) - b.Total, CPU: wire.Num(cpu) - b.CPU, GPU: wire.Num(gpu) - b.GPU, ANE: wire.Num(ane) - b.ANE}
	}
	fakepm.HoldEnergy(t, "counters", gained(m["exopower_soc_energy_joules_total"], m[`exopower_energy_joules_total{component="cpu"}`],
		m[`exopower_energy_joules_total{component="gpu"}`], m[`exopower_energy_joules_total{component="ane"}`]), l.profile, first, last, 0.5)
	e := st.EnergyJoules
	fakepm.HoldEnergy(t, "status", gained(float64(e.Total), float64(e.CPU), float64(e.GPU), float64(e.ANE)), l.profile, first, last, 0.5)
	if got := m["exopower_samples_total"]; got != float64(st.Samples) || got < 30 {
		t.Errorf("samples_total %v, status %d", got, st.Samples)
	}
	if got := m["exopower_covered_seconds_total"]; relErr(got, float64(st.CoveredSeconds)) > 1e-9 {
		t.Errorf("covered_seconds_total %v, status %v", got, st.CoveredSeconds)
	}
	for _, r := range powermetrics.Reasons() {
		if v, ok := m[`exopower_sample_errors_total{reason="`+r+`"}`]; !ok || v != 0 {
			t.Errorf("sample_errors_total{reason=%q} = %v (there: %v), want 0", r, v, ok)
		}
	}
	if m["exopower_source_restarts_total"] != 0 || m["exopower_open_spans"] != 0 ||
		m[`exopower_source_info{hw_model="MacBookPro17,1",os_build="23E224",tool="powermetrics"}`] != 1 {
		t.Errorf("metrics: %v", m)
	}
	t.Logf("%v windows over %.3f s", st.Samples, float64(st.CoveredSeconds))
}

// counting is a Source that counts the documents that reach it: one for
// each sample request that reached powermetrics, and the odd one at the
// end of a window.
type counting struct {
	*powermetrics.Supervisor
	docs atomic.Int64
}

func (c *counting) Next() (power.Sample, error) {
	s, err := c.Supervisor.Next()
	if err == nil {
		c.docs.Add(1)
	}
	return s, err
}

// However many clients open and end spans at once, powermetrics is asked
// for a sample at most once per powermetrics.MinRequestGap: it answers
// each request with a document, so the documents count them.
func TestSampleRequestsCoalesce(t *testing.T) {
	const clients, spans = 24, 6
	const interval = 200 * time.Millisecond
	l := launchFake(t, stepped, interval)
	src := &counting{Supervisor: l.sup}
	l.serve(t, src, interval)
	var wg sync.WaitGroup
	start := time.Now()
	before := src.docs.Load()
	for range clients {
		wg.Go(func() {
			for range spans {
				var o wire.Opened
				if code := call(t, http.MethodPost, l.ts.URL+"/v1/spans", &o); code != http.StatusCreated {
					t.Errorf("POST /v1/spans: %d", code)
					return
				}
				call(t, http.MethodPost, l.ts.URL+o.URL+"/end", nil)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	docs := src.docs.Load() - before
	// One request per gap, one more at each end of the stretch, and the
	// windows that ended by themselves (the fake's are at least half the
	// interval).
	most := int64(elapsed/powermetrics.MinRequestGap) + 2 + int64(elapsed/(interval/2)) + 1
	t.Logf("%d clients opened and ended %d spans in %v: %d documents (at most %d)", clients, clients*spans, elapsed.Round(time.Millisecond), docs, most)
	if docs > most {
		t.Errorf("%d documents in %v: more than one request per %v reached powermetrics", docs, elapsed, powermetrics.MinRequestGap)
	}
}
