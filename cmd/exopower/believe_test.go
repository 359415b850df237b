package main

import (
	"net/http"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/fakepm"
	"github.com/exopower/exopower/internal/wire"
)

// A steady profile: a span's edge inside a window that bridges a bogus
// reading is then placed as exactly as any other.
const steadyProfile = "0=9,3,1"

// holdSteady holds a summary of the steady profile over the fake IOReport
// to its exact energy, within percent.
func holdSteady(t *testing.T, what string, sum *wire.Summary, percent float64) {
	t.Helper()
	from, to := spanOf(t, sum.StartedAt, float64(sum.DurationSeconds))
	secs := to.Sub(from).Seconds()
	within(t, what+": SoC energy", float64(sum.EnergyJoules.Total), 13*secs, percent)
	within(t, what+": DRAM energy", float64(*sum.EnergyJoules.DRAM), fakepm.DRAMWatts*secs, percent)
	within(t, what+": system energy", float64(*sum.EnergyJoules.System), fakepm.SystemEnergy(from, to), percent)
}

// A CPU counter that reads 0 every fourth reading (what the binding
// writes for a channel with no simple value) is a glitch each time, not
// a reset whose next window holds every joule since boot: run's energy
// is the exact energy, its summary counts the CPU's glitches, and serve
// counts them in its status and its metrics, where operators look.
func TestGlitchesAreDroppedAndCountedWhereOperatorsLook(t *testing.T) {
	t.Parallel()
	glitchy := []string{"FAKEPM_IOREPORT=cpu-zero-every=4", "FAKEPM_PROFILE=" + steadyProfile}
	var sum wire.Summary
	ioreportJSON(t, &sum, glitchy, "run", "--json", "--source", "ioreport", "-i", "100ms", "--", "span", filepath.Join(t.TempDir(), "span"), "1.2")
	holdSteady(t, "run", &sum, 0.5)
	if sum.Rails.CPU.Glitches < 2 || sum.Rails.GPU.Glitches != 0 || sum.Rails.CPU.RefusedWindows != 0 {
		t.Errorf("rails %+v: want the CPU's glitches counted, nothing refused", sum.Rails)
	}
	if float64(sum.PeakPowerWatts.CPU) > 20 { // a short window under load reads high, 1.3 MJ far higher
		t.Errorf("the CPU's peak is %v W, of a CPU at 9 W", float64(sum.PeakPowerWatts.CPU))
	}

	s := startServe(t, steadyProfile, []string{"EXOPOWER_FAKE_IOREPORT=1", "FAKEPM_IOREPORT=cpu-zero-every=4"}, "--source", "ioreport", "-i", "100ms")
	var o wire.Opened
	if code := do(t, http.MethodPost, s.url+"/v1/spans", &o); code != http.StatusCreated {
		t.Fatalf("POST /v1/spans: %d", code)
	}
	var st wire.Status
	for deadline := time.Now().Add(time.Minute); st.Rails.CPU.Glitches < 3; time.Sleep(50 * time.Millisecond) {
		if code := do(t, http.MethodGet, s.url+"/v1/status", &st); code != http.StatusOK || time.Now().After(deadline) {
			t.Fatalf("status: %d, rails %+v: want the CPU's glitches counted", code, st.Rails)
		}
	}
	var end wire.Reading
	if code := do(t, http.MethodPost, s.url+o.URL+"/end", &end); code != http.StatusOK {
		t.Fatalf("end: %d", code)
	}
	holdSteady(t, "serve's span", end.Summary, 0.5)
	m := scrapeMetrics(t, s.url)
	if m[`exopower_rail_glitches_total{component="cpu"}`] < 3 || m[`exopower_rail_glitches_total{component="gpu"}`] != 0 ||
		m[`exopower_rail_refused_windows_total{component="cpu"}`] != 0 {
		t.Errorf("metrics: cpu glitches %v, gpu %v, cpu refused %v", m[`exopower_rail_glitches_total{component="cpu"}`],
			m[`exopower_rail_glitches_total{component="gpu"}`], m[`exopower_rail_refused_windows_total{component="cpu"}`])
	}
	// The counters hold the course: 13 W of SoC from serve's start.
	if soc, cov := m["exopower_soc_energy_joules_total"], m["exopower_covered_seconds_total"]; soc > 13*cov*1.01 {
		t.Errorf("the SoC's counter is %v J over %v s covered, of a 13 W SoC", soc, cov)
	}
}

// A CPU counter that jumps by 1e15 J and goes on from there: the window
// of the jump is refused, named with the CPU and its power, counted in
// the summary, and kept out of every figure (it gave 1e16 W).
func TestAJumpForGoodIsARefusedWindow(t *testing.T) {
	t.Parallel()
	var sum wire.Summary
	ioreportJSON(t, &sum, []string{"FAKEPM_IOREPORT=cpu-jump-at=8", "FAKEPM_PROFILE=" + steadyProfile},
		"run", "--json", "--source", "ioreport", "-i", "100ms", "--", "span", filepath.Join(t.TempDir(), "span"), "1.5")
	// Nothing of the jump's 1e15 J: the CPU's 9 W, less than 10 % off
	// (the refused window is bridged from its neighbours, and under load a
	// reading's stamp may trail the fake's clock by some milliseconds).
	if sum.Rails.CPU.RefusedWindows != 1 || float64(sum.PeakPowerWatts.CPU) > 20 || float64(sum.EnergyJoules.CPU) > 9*float64(sum.DurationSeconds)*1.1 {
		t.Errorf("rails %+v, CPU %v J over %v s, peak %v W: want one window refused and nothing of the jump", sum.Rails.CPU, float64(sum.EnergyJoules.CPU), float64(sum.DurationSeconds), float64(sum.PeakPowerWatts.CPU))
	}
	found := false
	named := regexp.MustCompile(`the CPU reads [0-9.]+e\+1[0-9] W over [0-9.]+m?s, beyond the 1000 W`)
	for _, w := range sum.Warnings {
		found = found || named.MatchString(w)
	}
	if !found {
		t.Errorf("warnings %q: want the CPU's refused window named", sum.Warnings)
	}
}
