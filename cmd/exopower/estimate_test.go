package main

import (
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/bench"
	"github.com/exopower/exopower/internal/calibrate"
	"github.com/exopower/exopower/internal/child"
	"github.com/exopower/exopower/internal/fakellm"
	"github.com/exopower/exopower/internal/wire"
)

// estimatedCSVColumns are the CSV's columns of bench's estimate at the
// wall: after the plug's, the last.
var estimatedCSVColumns = []string{"wall_estimated_energy_mean", "wall_estimated_energy_stddev", "wall_estimated_energy_uncertainty",
	"net_wall_estimated_energy_mean", "net_wall_estimated_energy_stddev", "wall_estimated_energy_per_unit_mean",
	"wall_estimated_energy_per_unit_stddev", "wall_estimated_from"}

// costCSVColumns are the CSV's columns of bench's cost and CO2e: after
// the estimate's, the last.
var costCSVColumns = []string{"cost_currency", "cost_price_per_kwh", "cost_of", "cost_mean", "cost_per_unit_mean",
	"co2e_intensity_g_per_kwh", "co2e_of", "co2e_grams_mean", "co2e_grams_per_unit_mean"}

// The fake IOReport's Mac, and the serial number the tests give it.
const (
	fakeModel  = "Mac14,14"
	fakeSerial = "C02TESTSERIAL"
)

// calibrated keeps in home's configuration directory (as calibrating
// reads it) a calibration of the fake IOReport's Mac of serial, as
// calibrate would have made it: wall = 12 W + 1.15 × the system's power,
// and 20 W + 2.5 × the SoC's, where soc.
func calibrated(t *testing.T, home, serial string, soc bool) *calibrate.Calibration {
	t.Helper()
	return calibratedAs(t, home, fakeModel, serial, soc)
}

// calibratedAs is calibrated for a Mac of model.
func calibratedAs(t *testing.T, home, model, serial string, soc bool) *calibrate.Calibration {
	t.Helper()
	mac, err := calibrate.Identify(model, serial)
	if err != nil {
		t.Fatal(err)
	}
	c := &calibrate.Calibration{SchemaVersion: calibrate.SchemaVersion, Type: calibrate.TypeCalibration, CalibratedAt: "2026-12-07T13:50:11Z",
		Mac: mac, Plug: calibrate.Plug{Kind: "shelly-gen2", Model: "SNPL-00112EU"}, Source: "ioreport", LevelsPercent: []int{0, 25, 50, 100},
		StepSeconds: 20, SettleSeconds: 5, GPU: calibrate.NoGPU,
		System: &calibrate.Fit{InterceptWatts: 12, Slope: 1.15, RMSWatts: 0.7, MaxResidualWatts: 1.1, RSquared: 0.998, Points: 4, MinWatts: 15, MaxWatts: 75}}
	if soc {
		c.SoC = &calibrate.Fit{InterceptWatts: 20, Slope: 2.5, RMSWatts: 1.2, MaxResidualWatts: 1.9, RSquared: 0.99, Points: 4, MinWatts: 1, MaxWatts: 30}
	}
	if err := calibrate.Save(filepath.Join(home, ".config", "exopower"), c, nil); err != nil {
		t.Fatal(err)
	}
	return c
}

// A calibration is used only where it is this Mac's and fits the
// source: another Mac's, another model's, and a fit of the system's
// power for a source of the SoC's alone are each refused with the
// reason; none at all says nothing.
func TestACalibrationIsUsedOnlyForItsOwnMac(t *testing.T) {
	home := t.TempDir()
	id := child.Identity{Env: []string{"HOME=" + home, "XDG_CONFIG_HOME="}}
	serial := func(s string) func() (string, error) { return func() (string, error) { return s, nil } }
	if c, why := findCalibration(id, serial(fakeSerial)).forMac(fakeModel, true); c != nil || why != "" {
		t.Fatalf("no calibration: %v, %q", c, why)
	}
	want := calibrated(t, home, fakeSerial, false)
	for _, tc := range []struct {
		name, serial, model string
		system              bool
		why                 string
	}{
		{"this Mac", fakeSerial, fakeModel, true, ""},
		{"another Mac of its model", "C02OTHERMAC", fakeModel, true, "no wall (estimated): the calibration is of another Mac14,14 (its serial number's digest differs): a fit of another Mac is never used"},
		{"another model", fakeSerial, "Mac15,3", true, "no wall (estimated): the calibration is of a Mac14,14, and this Mac is a Mac15,3"},
		{"a source of the SoC alone", fakeSerial, fakeModel, false, "no wall (estimated): " + calibrate.ErrNoFitForSource.Error() + ": give --source ioreport"},
	} {
		c, why := findCalibration(id, serial(tc.serial)).forMac(tc.model, tc.system)
		if tc.why == "" && (c == nil || c.System.InterceptWatts != want.System.InterceptWatts || why != "") || tc.why != "" && (c != nil || !strings.HasPrefix(why, tc.why)) {
			t.Errorf("%s: %v, %q; want %q", tc.name, c, why, tc.why)
		}
	}
}

// bench, with this Mac's calibration and no plug, estimates each run at
// the wall from the run's own system energy, exactly as the fit's line
// gives it, and its net of the idle power's estimate.
func TestBenchEstimatesTheWallFromThisMacsCalibration(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	c := calibrated(t, home, fakeSerial, true)
	out, stderr, status := outputOf(t, calibrating(t, home, fakeSerial, "bench", "--json", "--source", "ioreport", "-i", "100ms", "-r", "2",
		"--baseline", "500ms", "sleep 0.2"))
	var rep bench.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil || status != 0 || len(rep.Results) != 1 || rep.Baseline == nil {
		t.Fatalf("status %d, %v:\n%s\n%s", status, err, out, stderr)
	}
	r := rep.Results[0]
	idle := rep.Baseline.SystemPowerWatts
	if r.WallEstimated == nil || r.WallEstimated.From != calibrate.FromSystem || idle == nil || rep.Baseline.WallEstimatedPowerWatts == nil {
		t.Fatalf("estimate %+v, baseline %+v\n%s", r.WallEstimated, rep.Baseline, stderr)
	}
	f := c.System
	idleWall := f.InterceptWatts + f.Slope*float64(*idle)
	if math.Abs(float64(*rep.Baseline.WallEstimatedPowerWatts)-idleWall) > 1e-9*idleWall {
		t.Errorf("the idle wall %v W, want %v W", float64(*rep.Baseline.WallEstimatedPowerWatts), idleWall)
	}
	for i, run := range r.Runs {
		secs, sys := float64(run.DurationSeconds), float64(*run.EnergyJoules.System)
		e := f.InterceptWatts*secs + f.Slope*sys/float64(run.Coverage)
		w := run.WallEstimated
		if w == nil || math.Abs(float64(w.EnergyJoules)-e) > 1e-9*e || math.Abs(float64(w.UncertaintyJoules)-f.RMSWatts*secs) > 1e-9 ||
			w.NetEnergyJoules == nil || math.Abs(float64(*w.NetEnergyJoules)-(e-idleWall*secs)) > 1e-9*e {
			t.Errorf("run %d: %+v, want %v J ± %v J, net %v J", i, w, e, f.RMSWatts*secs, e-idleWall*secs)
		}
	}
}

// llm, with this Mac's calibration and no plug, over powermetrics (the
// SoC's power alone): each setting's run at the wall is the SoC's fit's
// line of the run's own energy, exactly, over its output tokens, and
// net of the idle power's estimate.
func TestLLMEstimatesTheWallFromThisMacsCalibration(t *testing.T) {
	t.Parallel()
	dir, home := t.TempDir(), t.TempDir()
	_, url, cfg := modelServer(t, dir, func(cfg *fakellm.Config) {
		cfg.Period, cfg.Prefill, cfg.Decode = 300*time.Millisecond, 50*time.Millisecond, 150*time.Millisecond
	})
	c := calibratedAs(t, home, "MacBookPro17,1", fakeSerial, true)
	rep, stderr, code := llmJSON(t, cfg.Overrides, []string{"HOME=" + home, "XDG_CONFIG_HOME=", "EXOPOWER_FAKE_SERIAL=" + fakeSerial},
		"-r", "2", "-w", "0", "--baseline", "300ms", url)
	if code != 0 || rep == nil || len(rep.Results) != 1 || rep.Results[0].Run == nil || rep.Baseline == nil {
		t.Fatalf("status %d, stderr %s", code, stderr)
	}
	run := rep.Results[0].Run
	e, rw := run.Summary.WallEstimated, run.WallEstimated
	if e == nil || rw == nil || e.From != calibrate.FromSoC || run.Summary.Wall != nil || rep.Baseline.WallEstimatedPowerWatts == nil || run.CompletionTokens == 0 {
		t.Fatalf("estimate %+v, %+v, baseline %+v\n%s", e, rw, rep.Baseline, stderr)
	}
	f, secs, n := c.SoC, float64(run.Summary.DurationSeconds), float64(run.CompletionTokens)
	want := f.InterceptWatts*secs + f.Slope*float64(run.Summary.EnergyJoules.Total)/float64(run.Summary.Coverage)
	idle := f.InterceptWatts + f.Slope*float64(rep.Baseline.PowerWatts)
	for _, c := range []struct {
		what      string
		got, want float64
	}{
		{"the run's estimate", float64(e.EnergyJoules), want},
		{"its J per output token", float64(*rw.JoulesPerOutputToken), want / n},
		{"the idle wall", float64(*rep.Baseline.WallEstimatedPowerWatts), idle},
		{"the net estimate", float64(*rw.NetEnergyJoules), want - idle*secs},
	} {
		if math.Abs(c.got-c.want) > 1e-9*math.Abs(c.want) {
			t.Errorf("%s %v, want %v", c.what, c.got, c.want)
		}
	}
}

// serve, with the calibration of the user who ran it and no plug, says
// in its status which fit it uses, whose energy is the fit's line over
// the stream's covered time and the system's energy, exactly; and in its
// log.
func TestServeEstimatesTheWallFromThisMacsCalibration(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	c := calibrated(t, home, fakeSerial, true)
	s := startServe(t, ioProfile, []string{"EXOPOWER_FAKE_IOREPORT=1", "FAKEPM_IOREPORT=" + calSystem, "HOME=" + home, "XDG_CONFIG_HOME=",
		"EXOPOWER_FAKE_SERIAL=" + fakeSerial}, "--source", "ioreport", "-i", "100ms")
	st := s.waitStatus(t, "the calibration in use", func(st wire.Status) bool {
		return st.WallEstimated != nil && st.WallEstimated.Calibration != nil && st.Samples >= 3
	})
	e := st.WallEstimated
	want := c.System.InterceptWatts*float64(st.CoveredSeconds) + c.System.Slope*float64(*st.EnergyJoules.System)
	if e.From != calibrate.FromSystem || e.EnergyJoules == nil || math.Abs(float64(*e.EnergyJoules)-want) > 1e-9*want ||
		e.File != filepath.Join(home, ".config", "exopower", calibrate.FileName) {
		t.Errorf("status %+v: want %v J from the system's fit", e, want)
	}
	// The log's line was written before the status answered; its reader
	// may not have it yet.
	const said = "exopower serve: wall (estimated) from this Mac's calibration of 2026-12-07 ("
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		s.mu.Lock()
		log := strings.Join(s.stderr, "\n")
		s.mu.Unlock()
		if strings.Contains(log, said) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a minute on, the log does not say which calibration is used:\n%s", log)
		}
	}
}
