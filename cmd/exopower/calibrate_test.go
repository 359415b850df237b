package main

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/calibrate"
	"github.com/exopower/exopower/internal/fakeplug"
	"github.com/exopower/exopower/internal/fakepm"
	"github.com/exopower/exopower/internal/wire"
)

// The truth of the calibration's tests: the fake IOReport's system draws
// a sine fast and wide enough that a short ladder spans watts of it
// (the fake's power follows no load: the levels are tiny, and cost the
// test no CPU), never below the SoC's and the memory's (where exopower
// would raise it to them), and the plug draws wallA + wallB × that,
// exactly.
const (
	calSystem = "system=50,30,4"
	wallA     = 20.0
	wallB     = 1.2
)

var calSine = fakepm.Sine{Base: 50, Swing: 30, Period: 4}

// calibrating is an exopower over the fake IOReport, of the fake serial,
// whose configuration directory is home's.
func calibrating(t *testing.T, home, serial string, args ...string) *exec.Cmd {
	t.Helper()
	cmd, _ := exopowerCmd(t, args...)
	cmd.Env = append(cmd.Env, "EXOPOWER_FAKE_IOREPORT=1", "FAKEPM_IOREPORT="+calSystem, "FAKEPM_PROFILE="+ioProfile,
		"HOME="+home, "XDG_CONFIG_HOME=")
	if serial != "" {
		cmd.Env = append(cmd.Env, "EXOPOWER_FAKE_SERIAL="+serial)
	}
	return cmd
}

func outputOf(t *testing.T, cmd *exec.Cmd) (stdout, stderr string, status int) {
	t.Helper()
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	return o.String(), e.String(), cmd.ProcessState.ExitCode()
}

// calibrate runs a short ladder against a plug whose power is a known
// line of the system's, keeps the fit for this Mac alone, and run's
// estimate follows the fit; another Mac's run refuses it.
func TestCalibrateFitsTheWallAndRunEstimatesIt(t *testing.T) {
	t.Parallel()
	_, url := plug(t, fakeplug.ShellyGen2, func(c *fakeplug.Config) {
		c.Profile = fakeplug.Profile{Smooth: &fakeplug.Smooth{
			Power:  func(at time.Time) float64 { return wallA + wallB*calSine.Power(at) },
			Energy: func(from, to time.Time) float64 { return wallA*to.Sub(from).Seconds() + wallB*calSine.Energy(from, to) },
		}}
	})
	home := t.TempDir()
	out, stderr, status := outputOf(t, calibrating(t, home, "C02TESTSERIAL", "calibrate", "--json", "--wall", url, "-i", "100ms",
		"--step", "300ms", "--levels", "0,1,2,3"))
	if status != 0 {
		t.Fatalf("calibrate: status %d\n%s", status, stderr)
	}
	var c calibrate.Calibration
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	f := c.System
	t.Logf("fit %+v", f)
	// The steps' averages are exact but for the plug's readings, held as
	// steps around a sine: a few tenths of a watt, over a span of watts.
	if f == nil || math.Abs(f.Slope-wallB) > 0.2 || math.Abs(f.InterceptWatts-wallA) > 10 || len(c.Steps) != 4 {
		t.Fatalf("fit %+v over %d steps: want wall = %v + %v × system, near enough\n%s", f, len(c.Steps), wallA, wallB, stderr)
	}
	mac, _ := calibrate.Identify("Mac14,14", "C02TESTSERIAL")
	path := filepath.Join(home, ".config", "exopower", calibrate.FileName)
	b, err := os.ReadFile(path)
	if err != nil || c.Mac != mac || c.Source != "ioreport" || c.Plug.Kind != "shelly-gen2" || strings.Contains(string(b), "C02TESTSERIAL") || strings.Contains(stderr+out, "C02TESTSERIAL") {
		t.Fatalf("%s (%v): want this Mac's digest, never its serial, from ioreport and the Shelly:\n%s", path, err, b)
	}
	for p, want := range map[string]os.FileMode{path: 0o600, filepath.Dir(path): 0o700 | os.ModeDir} {
		if fi, err := os.Stat(p); err != nil || fi.Mode() != want {
			t.Errorf("%s: mode %v (%v), want %v", p, fi.Mode(), err, want)
		}
	}
	t.Run("run estimates the wall from it", func(t *testing.T) { runEstimates(t, home, &c) })
	t.Run("another Mac's run does not use it", func(t *testing.T) {
		out, stderr, status := outputOf(t, calibrating(t, home, "C02OTHERMAC", "run", "--json", "--source", "ioreport", "--", "true"))
		var sum wire.Summary
		if err := json.Unmarshal([]byte(out), &sum); err != nil || status != 0 {
			t.Fatalf("status %d, %v:\n%s", status, err, stderr)
		}
		if sum.WallEstimated != nil || !strings.Contains(strings.Join(sum.Warnings, "\n"), "another Mac14,14") {
			t.Fatalf("wall_estimated %+v, warnings %q: want none, and why", sum.WallEstimated, sum.Warnings)
		}
	})
	t.Run("show and forget", func(t *testing.T) {
		out, _, status := outputOf(t, calibrating(t, home, "", "calibrate", "--show"))
		if status != 0 || !strings.Contains(out, "system    wall = ") || !strings.Contains(out, path) {
			t.Fatalf("--show: status %d:\n%s", status, out)
		}
		if _, _, status := outputOf(t, calibrating(t, home, "", "calibrate", "--forget")); status != 0 {
			t.Fatalf("--forget: status %d", status)
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Fatalf("after --forget: %v", err)
		}
		if _, stderr, status := outputOf(t, calibrating(t, home, "", "calibrate", "--show")); status != 125 || !strings.Contains(stderr, "no calibration") {
			t.Fatalf("--show of none: status %d:\n%s", status, stderr)
		}
	})
}

// runEstimates: run's wall (estimated) is the fit's line over the run's
// own system energy, exactly, its uncertainty the fit's RMS × duration,
// and near the plug's truth over the span.
func runEstimates(t *testing.T, home string, c *calibrate.Calibration) {
	out, stderr, status := outputOf(t, calibrating(t, home, "C02TESTSERIAL", "run", "--json", "--source", "ioreport", "--", "sleep", "0.5"))
	var sum wire.Summary
	if err := json.Unmarshal([]byte(out), &sum); err != nil || status != 0 {
		t.Fatalf("status %d, %v:\n%s", status, err, stderr)
	}
	e := sum.WallEstimated
	if e == nil || sum.Wall != nil || e.From != "system" || sum.EnergyJoules.System == nil {
		t.Fatalf("wall %+v, wall_estimated %+v: want an estimate from the system's fit alone\n%s", sum.Wall, e, stderr)
	}
	secs := float64(sum.DurationSeconds)
	want := c.System.InterceptWatts*secs + c.System.Slope*float64(*sum.EnergyJoules.System)
	if math.Abs(float64(e.EnergyJoules)-want) > 1e-6*want || math.Abs(float64(e.UncertaintyJoules)-c.System.RMSWatts*secs) > 1e-9 {
		t.Fatalf("estimate %+v: want %v J ± the RMS × %v s", e, want, secs)
	}
	from, to := spanOf(t, sum.StartedAt, secs)
	within(t, "the wall estimated", float64(e.EnergyJoules), wallA*secs+wallB*calSine.Energy(from, to), 15)
	// watch's summary has it too: the fit's line over its own energy.
	out, stderr, status = outputOf(t, calibrating(t, home, "C02TESTSERIAL", "watch", "--json", "--source", "ioreport", "-i", "100ms", "-n", "3"))
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var w wire.Summary
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &w); err != nil || status != 0 || w.WallEstimated == nil || w.EnergyJoules.System == nil {
		t.Fatalf("watch: status %d, %v, wall_estimated %+v:\n%s", status, err, w.WallEstimated, stderr)
	}
	secs = float64(w.DurationSeconds)
	if want := c.System.InterceptWatts*secs + c.System.Slope*float64(*w.EnergyJoules.System); math.Abs(float64(w.WallEstimated.EnergyJoules)-want) > 1e-6*want {
		t.Errorf("watch's estimate %v J, want %v J", float64(w.WallEstimated.EnergyJoules), want)
	}
}

// On a machine whose serial number cannot be read, calibrate runs
// nothing: a fit that could not be told from another Mac's is no fit.
func TestCalibrateWithoutASerialNumberRunsNothing(t *testing.T) {
	t.Parallel()
	_, stderr, status := outputOf(t, calibrating(t, t.TempDir(), "", "calibrate", "--wall", "shelly://127.0.0.1:9"))
	if status != 125 || !strings.Contains(stderr, "serial number could not be read") || !strings.Contains(stderr, "nothing was run") {
		t.Fatalf("status %d:\n%s", status, stderr)
	}
}
