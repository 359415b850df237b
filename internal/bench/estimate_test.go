package bench

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/calibrate"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/wire"
)

// testCalibration fits the wall as 10 W + 1.2 × the system's power
// (RMS 0.5 W, over 20 to 80 W), and as 15 W + 2 × the SoC's.
func testCalibration() *calibrate.Calibration {
	return &calibrate.Calibration{SchemaVersion: 1, Type: calibrate.TypeCalibration, CalibratedAt: "2026-12-07T13:50:11Z",
		Mac: calibrate.Mac{HWModel: "Mac14,14", SerialSHA256: "ab"}, Plug: calibrate.Plug{Kind: "shelly-gen2", Model: "SNPL-00112EU"},
		System: &calibrate.Fit{InterceptWatts: 10, Slope: 1.2, RMSWatts: 0.5, MaxResidualWatts: 0.8, RSquared: 0.99, Points: 4, MinWatts: 20, MaxWatts: 80},
		SoC:    &calibrate.Fit{InterceptWatts: 15, Slope: 2, RMSWatts: 1, MaxResidualWatts: 1.5, RSquared: 0.98, Points: 4, MinWatts: 2, MaxWatts: 20}}
}

// systemRun is a run of seconds, coverage covered, whose SoC drew soc J
// and the whole Mac system J over the time covered.
func systemRun(seconds, covered, soc, system float64) Run {
	r := runOf(soc, seconds)
	r.Coverage = wire.Num(covered)
	s := wire.Num(system)
	r.EnergyJoules.System = &s
	return r
}

// Each run's wall is the fit's line of its own average power over the
// time covered, held over its duration; net of the idle power's
// estimate; per unit; and the command's statistics over the runs. The
// text, the CSV and the tables carry them, marked as estimates.
func TestBenchEstimatesEachRunAtTheWallFromTheCalibration(t *testing.T) {
	cal := testCalibration()
	units := 4.0
	a, b := systemRun(2, 1, 10, 100), systemRun(4, 0.5, 12, 120) // 50 W and 60 W over the time covered
	for _, r := range []*Run{&a, &b} {
		u := wire.Num(units)
		r.Units = &u
	}
	idle := Window{Seconds: 1, Watts: 2, SystemWatts: 20, HasSystem: true}
	rep := NewReport(100 * time.Millisecond)
	rep.Unit, rep.cal = new(string), cal
	*rep.Unit = "token"
	rep.Baseline = NewBaseline(spans(idle, idle), nil, nil)
	rep.Results = []Result{{Command: "x", Runs: []Run{a, b}, cal: cal}}
	rep.Finish(-1)
	r := rep.Results[0]
	// By hand: 10 W × 2 s + 1.2 × 100 J; (10 W + 1.2 × 120 J / 2 s) × 4 s;
	// the idle wall 10 W + 1.2 × 20 W.
	ea, eb, idleWall := 10*2+1.2*100, (10+1.2*60)*4, 10+1.2*20.0
	w := r.WallEstimated
	if w == nil || rep.Baseline.WallEstimatedPowerWatts == nil || !near(float64(*rep.Baseline.WallEstimatedPowerWatts), idleWall) {
		t.Fatalf("estimate %+v, baseline %+v", w, rep.Baseline)
	}
	for i, want := range []struct{ e, unc, net, secs float64 }{{ea, 0.5 * 2, ea - idleWall*2, 2}, {eb, 0.5 * 4, eb - idleWall*4, 4}} {
		re := r.Runs[i].WallEstimated
		if re == nil || !near(float64(re.EnergyJoules), want.e) || !near(float64(re.UncertaintyJoules), want.unc) || re.NetEnergyJoules == nil ||
			!near(float64(*re.NetEnergyJoules), want.net) || re.Extrapolated {
			t.Errorf("run %d: %+v, want %v J ± %v J, net %v J", i, re, want.e, want.unc, want.net)
		}
	}
	if !near(float64(w.EnergyJoules.Mean), (ea+eb)/2) || !near(float64(*w.EnergyJoules.Stddev), math.Abs(ea-eb)/math.Sqrt2) ||
		!near(float64(w.UncertaintyJoules), 1.5) || !near(float64(w.NetEnergyJoules.Mean), (ea+eb)/2-idleWall*3) ||
		!near(float64(w.EnergyPerUnitJoules.Mean), (ea+eb)/2/units) || w.From != calibrate.FromSystem || w.Extrapolated ||
		w.Calibration.CalibratedAt != cal.CalibratedAt || w.Calibration.RMSWatts != 0.5 {
		t.Errorf("the command's estimate %+v", w)
	}
	var text bytes.Buffer
	WriteText(&text, rep, &output.Styles{Plain: true})
	for _, want := range []string{"\n  Wall energy (estimated) (mean ± σ): ", "[not measured: from this Mac's calibration of 2026-12-07, ± 1.500 J by its RMS of 0.500 W]",
		"\n  Wall (estimated) per token (mean ± σ): ", "\n  at the wall (estimated): 34.00 W from this Mac's calibration, not measured",
		"  at the wall (estimated) 132.00 J ± "} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("no %q in the text:\n%s", want, text.String())
		}
	}
	rows := csvRows(t, rep)
	n := len(rows[0]) - costColumnCount - estimatedColumnCount
	if rows[0][n] != "wall_estimated_energy_mean" || rows[1][n] != "234" || rows[1][n+2] != "1.5" || rows[1][n+3] != "132" || rows[1][n+7] != "system" ||
		rows[0][n+7] != "wall_estimated_from" || rows[1][n-1] != "" {
		t.Errorf("csv:\n%v\n%v", rows[0][n-1:], rows[1][n-1:])
	}
	var md bytes.Buffer
	WriteMarkdown(&md, rep)
	if !strings.Contains(md.String(), "| Wall energy (estimated) [J] | Wall (estimated) ± [J] | Net wall energy (estimated) [J] | Wall energy (estimated) per unit [J] | Energy [J] |") ||
		!strings.Contains(md.String(), " | 234.000 ± 132.936 | 1.500 | 132.000 ± 84.853 | 58.500000 ± 33.234019 | ") {
		t.Errorf("markdown:\n%s", md.String())
	}
}

// A command's block, written before the closing baseline, has the
// estimate but no net; where a source reads the SoC alone, the SoC's fit
// gives it; a run beyond the steps' range is marked extrapolated; a run
// no window covered leaves the command without a figure (a mean over
// some runs is not the command's), and a plug's wall leaves no room for
// an estimate.
func TestBenchEstimatesBeforeTheBaselineFromTheSoCAndNotOverSomeRuns(t *testing.T) {
	cal := testCalibration()
	r := Result{Command: "x", Runs: []Run{runOf(6, 2), runOf(50, 2)}, cal: cal} // 3 W and 25 W of the SoC's
	p := r.Preview(100*time.Millisecond, nil)
	if r.WallEstimated != nil || r.Runs[0].WallEstimated != nil {
		t.Errorf("the preview changed its result: %+v, %+v", r.WallEstimated, r.Runs[0].WallEstimated)
	}
	w := p.WallEstimated
	if w == nil || w.From != calibrate.FromSoC || w.NetEnergyJoules != nil || !near(float64(p.Runs[0].WallEstimated.EnergyJoules), 15*2+2*6) ||
		p.Runs[0].WallEstimated.Extrapolated || !p.Runs[1].WallEstimated.Extrapolated || !w.Extrapolated {
		t.Errorf("preview's estimate %+v, runs %+v %+v", w, p.Runs[0].WallEstimated, p.Runs[1].WallEstimated)
	}
	uncovered := runOf(0, 2)
	uncovered.Coverage = 0
	r = Result{Command: "y", Runs: []Run{runOf(6, 2), uncovered}, cal: cal}
	r.finish(nil, 100*time.Millisecond, nil)
	if r.WallEstimated != nil || r.Runs[1].WallEstimated != nil || r.Runs[0].WallEstimated == nil {
		t.Errorf("a run not covered: %+v, runs %+v %+v", r.WallEstimated, r.Runs[0].WallEstimated, r.Runs[1].WallEstimated)
	}
	measured := runOf(6, 2)
	measured.Wall = &RunWall{EnergyJoules: 40, Coverage: 1, Method: "counter"}
	r = Result{Command: "z", Runs: []Run{measured}, cal: cal}
	r.finish(nil, 100*time.Millisecond, nil)
	if r.Wall == nil || r.WallEstimated != nil {
		t.Errorf("with a plug: wall %+v, estimate %+v", r.Wall, r.WallEstimated)
	}
}
