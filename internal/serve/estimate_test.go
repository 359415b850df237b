package serve

import (
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/calibrate"
	"github.com/exopower/exopower/internal/power"
)

// calibration fits the wall as 10 W + 1.2 × the system's power (RMS
// 0.5 W), and as 15 W + 2 × the SoC's.
var calibration = &calibrate.Calibration{CalibratedAt: "2026-12-07T13:50:11Z", Plug: calibrate.Plug{Kind: "shelly-gen2", Model: "SNPL-00112EU"},
	System: &calibrate.Fit{InterceptWatts: 10, Slope: 1.2, RMSWatts: 0.5, Points: 4, MinWatts: 20, MaxWatts: 80},
	SoC:    &calibrate.Fit{InterceptWatts: 15, Slope: 2, RMSWatts: 1, Points: 4, MinWatts: 2, MaxWatts: 20}}

// systemSample is sample i, whose Mac draws 40 W in all as its SMC
// reports it.
func systemSample(i int, arrival time.Time) power.Sample {
	s := sample(i, arrival, 100*time.Millisecond)
	s.Power.System, s.Has.System = 40, true
	return s
}

// estimated is a Server over a stream fed by hand whose calibration is
// found by find, asked for by the model and whether the source reads the
// system's power; asked counts the askings.
func estimated(t *testing.T, find func(model string, hasSystem bool) (*calibrate.Calibration, string)) (*Server, *feed, *clock, *int, *lockedBuffer) {
	asked, log, c := new(int), &lockedBuffer{}, newClock()
	s, f := offline(t, c, Config{CalibrationFile: "/home/u/.config/exopower/calibration.json", Log: log,
		Calibration: func(model string, hasSystem bool) (*calibrate.Calibration, string) {
			*asked++
			return find(model, hasSystem)
		}})
	return s, f, c, asked, log
}

// feedWindows sends n windows of 100 ms and waits until the stream has
// them all.
func feedWindows(t *testing.T, s *Server, f *feed, c *clock, n int) {
	t.Helper()
	from := s.meter.Totals().Windows
	for i := range n {
		c.advance(100 * time.Millisecond)
		f.ch <- systemSample(from+i, c.Now())
	}
	waitUntil(t, "the windows", func() bool { return s.meter.Totals().Windows >= from+n })
}

// With this Mac's calibration, the counter is the fit's line summed over
// the windows (intercept × covered seconds + slope × the system's
// energy), exactly; the info and RMS say which fit; the status holds the
// same; each span has its own wall_estimated, as run's; and the
// calibration is held to the Mac once, at the first window, which names
// it, and said in the log.
func TestServeEstimatesTheWallFromThisMacsCalibration(t *testing.T) {
	var model string
	var system bool
	s, f, c, asked, log := estimated(t, func(m string, sys bool) (*calibrate.Calibration, string) {
		model, system = m, sys
		return calibration, ""
	})
	h := s.Handler()
	st := status(t, s)
	if e := st.WallEstimated; e == nil || e.Calibration != nil || e.Unused == nil || !strings.Contains(*e.Unused, "not known yet") || *asked != 0 {
		t.Fatalf("before the first window: %+v, asked %d times", e, *asked)
	}
	if body := scrapeBody(t, h); strings.Contains(body, "exopower_wall_estimated_") {
		t.Errorf("before the first window, an estimate was published:\n%s", body)
	}
	feedWindows(t, s, f, c, 10)
	id := mustOpen(t, h)
	feedWindows(t, s, f, c, 5)
	m, err := parseMetrics(strings.NewReader(scrapeBody(t, h)))
	if err != nil {
		t.Fatal(err)
	}
	// 15 windows of 100 ms at 40 W: 1.5 s, 60 J.
	want := 10*1.5 + 1.2*60
	info := `exopower_wall_estimated_info{calibrated_at="2026-12-07T13:50:11Z",from="system",plug_kind="shelly-gen2",plug_model="SNPL-00112EU"}`
	if got := m["exopower_wall_estimated_energy_joules_total"]; math.Abs(got-want) > 1e-9*want || m[info] != 1 || m["exopower_wall_estimated_rms_watts"] != 0.5 {
		t.Errorf("the counter %v J, want %v J; info %v, rms %v", got, want, m[info], m["exopower_wall_estimated_rms_watts"])
	}
	st = status(t, s)
	if e := st.WallEstimated; e == nil || e.Unused != nil || e.Calibration == nil || e.From != calibrate.FromSystem || e.EnergyJoules == nil ||
		math.Abs(float64(*e.EnergyJoules)-want) > 1e-9*want || e.Calibration.Slope != 1.2 || e.File != "/home/u/.config/exopower/calibration.json" {
		t.Errorf("status: %+v", e)
	}
	rec := serveLocal(h, httptest.NewRequest(http.MethodGet, "/v1/spans/"+id, nil))
	var r reading
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil || rec.Code != http.StatusOK || r.EnergyJoules.System == nil {
		t.Fatalf("span: %d %s", rec.Code, rec.Body)
	}
	secs := float64(r.DurationSeconds)
	spanWant := 10*secs + 1.2*float64(*r.EnergyJoules.System)/float64(r.Coverage)
	if e := r.WallEstimated; e == nil || math.Abs(float64(e.EnergyJoules)-spanWant) > 1e-9*spanWant || e.From != calibrate.FromSystem ||
		math.Abs(float64(e.UncertaintyJoules)-0.5*secs) > 1e-9 {
		t.Errorf("the span's estimate %+v, want %v J over %v s", e, spanWant, secs)
	}
	if *asked != 1 || model != "Mac14,14" || !system || !strings.Contains(log.String(), "exopower serve: wall (estimated) from this Mac's calibration of 2026-12-07 (/home/u/.config/exopower/calibration.json): wall = 10.00 W + 1.200 × system, RMS 0.500 W\n") {
		t.Errorf("asked %d times, for %q (system %v); log %q", *asked, model, system, log.String())
	}
}

// A calibration refused (another Mac's) publishes nothing, and the
// status and the log say why; with none at all, the status says where
// it was looked for, and the log nothing.
func TestServeSaysWhyItEstimatesNothing(t *testing.T) {
	const why = "no wall (estimated): the calibration is of another Mac14,14 (its serial number's digest differs): a fit of another Mac is never used"
	for _, tc := range []struct {
		name, why, unused string
	}{
		{"another Mac's", why, why},
		{"none", "", "no calibration of this Mac in /home/u/.config/exopower/calibration.json: make one with exopower calibrate --wall URL"},
	} {
		s, f, c, _, log := estimated(t, func(string, bool) (*calibrate.Calibration, string) { return nil, tc.why })
		feedWindows(t, s, f, c, 2)
		st := status(t, s)
		if e := st.WallEstimated; e == nil || e.Calibration != nil || e.EnergyJoules != nil || e.Unused == nil || *e.Unused != tc.unused {
			t.Errorf("%s: status %+v", tc.name, e)
		}
		if body := scrapeBody(t, s.Handler()); strings.Contains(body, "exopower_wall_estimated_") {
			t.Errorf("%s: an estimate was published:\n%s", tc.name, body)
		}
		if wantLog := map[bool]string{true: "exopower serve: " + tc.why + "\n"}[tc.why != ""]; log.String() != wantLog {
			t.Errorf("%s: log %q, want %q", tc.name, log.String(), wantLog)
		}
	}
}

// scrapeBody is GET /metrics's body.
func scrapeBody(t *testing.T, h http.Handler) string {
	t.Helper()
	rec := serveLocal(h, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", rec.Code, rec.Body)
	}
	return rec.Body.String()
}
