package llm

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/exopower/exopower/internal/calibrate"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/wire"
)

func closeTo(got, want float64) bool { return math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want)) }

func ptr(x float64) *wire.Num { n := wire.Num(x); return &n }

// A setting's run at the wall, estimated: the fit's line of the run's
// own system power over the time covered, held over the run; per output
// token; net of the idle power's estimate, with the idle power's error
// through the fit's slope. The text leads with it, marked as an
// estimate, and the CSV and the table carry it.
func TestLLMEstimatesTheRunAtTheWallFromTheCalibration(t *testing.T) {
	cal := &calibrate.Calibration{SchemaVersion: 1, Type: calibrate.TypeCalibration, CalibratedAt: "2026-12-07T13:50:11Z",
		System: &calibrate.Fit{InterceptWatts: 10, Slope: 1.2, RMSWatts: 0.5, MaxResidualWatts: 0.8, RSquared: 0.99, Points: 4, MinWatts: 20, MaxWatts: 80}}
	m := &Meter{cal: cal}
	// 4 s, half of it covered: 80 J of the system's over 2 s, 40 W.
	sum := &wire.Summary{DurationSeconds: 4, Coverage: 0.5, EnergyJoules: wire.Components{Total: 20, System: ptr(80)}}
	m.addWallEstimate(sum)
	b := &Baseline{PowerWatts: 2, StandardErrorWatts: ptr(0.1), SystemPowerWatts: ptr(25), SystemStandardErrorWatts: ptr(0.3)}
	b.WallEstimatedPowerWatts, b.wallEstimatedFrom = m.wallIdleEstimated(b)
	res := &Result{Model: "tiny", Concurrency: 1, Run: &RunTotals{Summary: sum}, Requests: []Request{{CompletionTokens: 50}, {CompletionTokens: 30}}}
	res.runTotals(b)
	// By hand: (10 W + 1.2 × 40 W) × 4 s; the idle wall 10 W + 1.2 × 25 W.
	e, idle, n := (10+1.2*40)*4.0, 10+1.2*25.0, 80.0
	w, rw := sum.WallEstimated, res.Run.WallEstimated
	if w == nil || !closeTo(float64(w.EnergyJoules), e) || !closeTo(float64(w.UncertaintyJoules), 0.5*4) || w.From != calibrate.FromSystem ||
		b.WallEstimatedPowerWatts == nil || !closeTo(float64(*b.WallEstimatedPowerWatts), idle) {
		t.Fatalf("the run's estimate %+v, the idle wall %v", w, b.WallEstimatedPowerWatts)
	}
	if rw == nil || !closeTo(float64(*rw.JoulesPerOutputToken), e/n) || !closeTo(float64(*rw.UncertaintyJoulesPerOutputToken), 2/n) ||
		!closeTo(float64(*rw.NetEnergyJoules), e-idle*4) || !closeTo(float64(*rw.NetJoulesPerOutputToken), (e-idle*4)/n) ||
		!closeTo(float64(*rw.NetEnergyUncertaintyJoules), 1.2*0.3*4) {
		t.Fatalf("the run's figures %+v", rw)
	}
	res.Figures = &Figures{Requests: 2, SoC: &Scope{}}
	rep := &Report{Baseline: b, Results: []Result{*res}}
	var text bytes.Buffer
	WriteText(&text, rep, &output.Styles{Plain: true})
	for _, want := range []string{"\n  At the wall (estimated): 2.9 J per output token    (whole run, energy 232.00 J ± 2.000 J, not measured: from this Mac's calibration of 2026-12-07, RMS 0.500 W)",
		"at the wall (estimated, not measured) 40.00 W", "\n  At the wall (estimated): 900 mJ per output token    (whole run, net energy 72.00 J ± 1.440 J"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("no %q in the text:\n%s", want, text.String())
		}
	}
	var csv, md bytes.Buffer
	WriteCSV(&csv, rep)
	if head, row, _ := strings.Cut(csv.String(), "\n"); !strings.HasSuffix(head, ",wall_estimated_energy_joules,wall_estimated_uncertainty_joules,wall_estimated_from,"+
		"wall_estimated_joules_per_output_token,wall_estimated_net_energy_joules,wall_estimated_net_joules_per_output_token,"+strings.Join(costColumns, ",")) ||
		!strings.HasSuffix(strings.TrimSpace(row), ",232,2,system,2.9,72,0.9"+strings.Repeat(",", len(costColumns))) {
		t.Errorf("csv:\n%s", csv.String())
	}
	WriteMarkdown(&md, rep)
	if !strings.Contains(md.String(), " Whole run at the wall (estimated) mJ/output token (net of idle) |") || !strings.Contains(md.String(), " 900 ± 18 |") {
		t.Errorf("markdown:\n%s", md.String())
	}
}

// Over several Macs, or with a plug, nothing is estimated: a node's fit
// is its own, and a plug measures the wall. A refusal is said once.
func TestLLMEstimatesNothingOverNodesOrWithAPlug(t *testing.T) {
	cal := &calibrate.Calibration{System: &calibrate.Fit{InterceptWatts: 10, Slope: 1.2}}
	m := &Meter{}
	m.EstimateWall(cal, "no wall (estimated): the calibration is of another Mac14,14")
	sum := &wire.Summary{DurationSeconds: 1, Coverage: 1, EnergyJoules: wire.Components{Total: 5, System: ptr(30)}}
	m.addWallEstimate(sum)
	if m.cal != nil || sum.WallEstimated != nil || len(m.notes) != 1 {
		t.Errorf("a meter of no local Mac alone: calibration %v, estimate %+v, notes %q", m.cal, sum.WallEstimated, m.notes)
	}
}
