package bench

import (
	"bytes"
	"encoding/csv"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/wire"
)

// runOf is a run of energy joules over seconds, the command's wall-clock
// time too.
func runOf(joules, seconds float64) Run {
	return Run{DurationSeconds: wire.Num(seconds), WallSeconds: wire.Num(seconds), EnergyJoules: wire.Components{Total: wire.Num(joules)},
		AvgPowerWatts: wire.Components{Total: wire.Num(joules / seconds)}, Coverage: 1, Samples: 5}
}

func TestNetEnergyIsEnergyLessIdlePowerOverTheDuration(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	// Idle 2 W ± 0.1 W: four windows of 0.5 s at 1.9, 2.1, 1.9, 2.1 W.
	ws := []Window{{Seconds: 0.5, Watts: 1.9}, {Seconds: 0.5, Watts: 2.1}, {Seconds: 0.5, Watts: 1.9}, {Seconds: 0.5, Watts: 2.1}}
	before := NewIdle(t0, 2*time.Second, ws)
	rep := NewReport(100 * time.Millisecond)
	rep.Baseline = NewBaseline(before, nil, ws)
	rep.Results = []Result{{Command: "a", Runs: []Run{runOf(10, 2), runOf(12, 3)}}}
	rep.Finish(-1)
	// s = √(4·0.01/3), se = s/2
	se := math.Sqrt(0.04/3) / 2
	if got := val(rep.Baseline.StandardErrorWatts); math.Abs(got-se) > 1e-12 {
		t.Fatalf("idle standard error %v, want %v", got, se)
	}
	r := rep.Results[0]
	for i, want := range []struct{ net, sigma float64 }{{10 - 2*2, se * 2}, {12 - 2*3, se * 3}} {
		run := r.Runs[i]
		if math.Abs(val(run.NetEnergyJoules)-want.net) > 1e-9 || math.Abs(val(run.NetEnergyUncertaintyJoules)-want.sigma) > 1e-12 {
			t.Errorf("run %d: net %v ± %v, want %v ± %v", i, val(run.NetEnergyJoules), val(run.NetEnergyUncertaintyJoules), want.net, want.sigma)
		}
	}
	if got, want := float64(r.NetEnergyJoules.Mean), 6.0; math.Abs(got-want) > 1e-9 {
		t.Errorf("mean net %v, want %v", got, want)
	}
	if got, want := val(r.NetEnergyUncertaintyJoules), se*2.5; math.Abs(got-want) > 1e-12 {
		t.Errorf("mean net's uncertainty %v, want %v (the idle error over the mean duration)", got, want)
	}
}

func TestComparisonAgainstTheLeastEnergy(t *testing.T) {
	rep := NewReport(100 * time.Millisecond)
	// a: runs 1.9 and 2.1 J (sd √0.02); b: 4 and 4.6 J (sd √0.18)
	rep.Results = []Result{
		{Command: "b", Runs: []Run{runOf(4, 1), runOf(4.6, 1)}},
		{Command: "a", Runs: []Run{runOf(1.9, 1), runOf(2.1, 1)}},
	}
	rep.Finish(-1)
	if rep.Reference == nil || *rep.Reference != 1 {
		t.Fatalf("reference %v, want 1 (a, the least energy)", rep.Reference)
	}
	r := 4.3 / 2.0
	sr := r * math.Sqrt(0.02/4+0.18/(4.3*4.3))
	b := rep.Results[0]
	if math.Abs(val(b.RelativeEnergy)-r) > 1e-12 || math.Abs(val(b.RelativeEnergyStddev)-sr) > 1e-12 {
		t.Errorf("b relative %v ± %v, want %v ± %v", val(b.RelativeEnergy), val(b.RelativeEnergyStddev), r, sr)
	}
	if c := rep.Comparison(); len(c) != 1 || c[0] != "a ran 2.15 ± 0.26 times less energy than b" {
		t.Errorf("comparison %q", c)
	}
}

func TestAGivenReferenceIsComparedWith(t *testing.T) {
	rep := NewReport(100 * time.Millisecond)
	rep.Results = []Result{{Command: "b", Runs: []Run{runOf(4, 1)}}, {Command: "a", Runs: []Run{runOf(2, 1)}}}
	rep.Finish(0)
	if got := val(rep.Results[1].RelativeEnergy); got != 0.5 {
		t.Errorf("a relative to b: %v, want 0.5", got)
	}
}

func TestWarnings(t *testing.T) {
	short := runOf(1, 0.15)
	thin := runOf(1, 1)
	thin.Coverage = 0.95
	failed := runOf(1.05, 1)
	failed.ExitCode = 2
	rep := NewReport(100 * time.Millisecond)
	rep.Results = []Result{{Command: "x", Runs: []Run{runOf(0.9, 1), runOf(1.1, 1), runOf(0.95, 1), runOf(5, 1), short, thin, failed}}}
	rep.Finish(-1)
	got := strings.Join(rep.Results[0].Warnings, "\n")
	for _, want := range []string{"1 run of 7 used an energy far from the others", "1 run shorter than two sampling windows (200ms)",
		"1 run with less than 99% of its span covered", "the command failed in 1 run of 7"} {
		if !strings.Contains(got, want) {
			t.Errorf("warnings lack %q:\n%s", want, got)
		}
	}
}

// Ten runs of half a second within 8.28-8.50 J (σ about 1 %) are as
// alike as the measurement makes them: no outlier. One of 12 J among
// them is one.
func TestRunsWithinOnePercentAreNoOutliers(t *testing.T) {
	for _, c := range []struct {
		last float64
		want string
	}{{8.49, ""}, {12, "1 run of 10 used an energy far from the others"}} {
		rep := NewReport(100 * time.Millisecond)
		var runs []Run
		for _, j := range []float64{8.28, 8.29, 8.30, 8.29, 8.28, 8.50, 8.29, 8.48, 8.30, c.last} {
			runs = append(runs, runOf(j, 0.5))
		}
		rep.Results = []Result{{Command: "sleep 0.5", Runs: runs}}
		rep.Finish(-1)
		got := strings.Join(rep.Results[0].Warnings, "\n")
		if c.want == "" && strings.Contains(got, "far from") || !strings.Contains(got, c.want) {
			t.Errorf("last run %v J: warnings %q, want %q", c.last, got, c.want)
		}
	}
}

func TestNetEnergyWithinTheBaselinesErrorIsNotSignificant(t *testing.T) {
	ws := []Window{{Seconds: 1, Watts: 1}, {Seconds: 1, Watts: 3}}
	rep := NewReport(100 * time.Millisecond)
	rep.Baseline = NewBaseline(NewIdle(time.Now(), time.Second, ws), nil, ws)
	rep.Results = []Result{{Command: "x", Runs: []Run{runOf(2.5, 1)}}}
	rep.Finish(-1)
	if w := strings.Join(rep.Results[0].Warnings, "\n"); !strings.Contains(w, "cannot be told apart from idle") {
		t.Errorf("no warning that net 0.5 J ± 1 J is not significant: %q", w)
	}
}

func TestBaselineDrift(t *testing.T) {
	a := []Window{{Seconds: 1, Watts: 2.0}, {Seconds: 1, Watts: 2.1}, {Seconds: 1, Watts: 1.9}}
	b := []Window{{Seconds: 1, Watts: 4.0}, {Seconds: 1, Watts: 4.1}, {Seconds: 1, Watts: 3.9}}
	bl := NewBaseline(NewIdle(time.Now(), time.Second, a), NewIdle(time.Now(), time.Second, b), append(a, b...))
	if _, ok := bl.Drifted(); !ok {
		t.Error("2 W before and 4 W after, each ± 0.06 W: no drift said")
	}
	bl = NewBaseline(NewIdle(time.Now(), time.Second, a), NewIdle(time.Now(), time.Second, a), append(a, a...))
	if msg, ok := bl.Drifted(); ok {
		t.Errorf("the same idle power before and after: %s", msg)
	}
}

// A constant power, whose windows cut short at the span's edges read a
// few whole millijoules each: their rounding moves each span's power a
// little, one up, the other down, which is no drift of the Mac.
func TestEdgeWindowsRoundingIsNoDrift(t *testing.T) {
	// 4.5 W; edge windows of 2 ms whose 9 mJ rounded to 13 mJ and 5 mJ.
	a := []Window{{Seconds: 0.002, Watts: 6.5}, {Seconds: 0.1, Watts: 4.5}, {Seconds: 0.1, Watts: 4.5}, {Seconds: 0.1, Watts: 4.5}, {Seconds: 0.1, Watts: 4.5}}
	b := []Window{{Seconds: 0.1, Watts: 4.5}, {Seconds: 0.1, Watts: 4.5}, {Seconds: 0.1, Watts: 4.5}, {Seconds: 0.1, Watts: 4.5}, {Seconds: 0.002, Watts: 2.5}}
	bl := NewBaseline(NewIdle(time.Now(), time.Second, a), NewIdle(time.Now(), time.Second, b), append(a, b...))
	if p1, p2 := bl.Before.PowerWatts, bl.After.PowerWatts; p1 == p2 {
		t.Fatalf("the spans' powers %v and %v: the edges should move them apart", p1, p2)
	}
	if msg, ok := bl.Drifted(); ok {
		t.Errorf("a constant power: %s", msg)
	}
}

// csvRows is the CSV export of rep, parsed.
func csvRows(t *testing.T, rep *Report) [][]string {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteCSV(&buf, rep); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestCSVHasARowPerCommand(t *testing.T) {
	rep := NewReport(100 * time.Millisecond)
	rep.Results = []Result{{Command: "sleep 1", Parameters: map[string]string{"n": "1"}, Runs: []Run{runOf(2, 1), runOf(4, 1)}}}
	rep.Finish(-1)
	rows := csvRows(t, rep)
	n := len(rows[0])
	if len(rows) != 2 || rows[1][0] != "sleep 1" || rows[0][8] != "parameter_n" || rows[1][8] != "1" || rows[0][9] != "energy_mean" ||
		rows[1][9] != "3" || rows[1][14] != "" || rows[0][n-4] != "system_energy_mean" || rows[1][n-4] != "" {
		t.Errorf("csv:\n%v", rows)
	}
}

// A command alone is its own reference: its Relative energy is 1.00, as
// hyperfine's Relative is for one command, not a blank.
func TestMarkdown(t *testing.T) {
	rep := NewReport(100 * time.Millisecond)
	rep.Results = []Result{{Command: "a|b", Runs: []Run{runOf(2, 1), runOf(4, 1)}}}
	rep.Finish(-1)
	var buf bytes.Buffer
	WriteMarkdown(&buf, rep)
	want := "| `a\\|b` | 1.000 ± 0.000 | 1.000 | 1.000 | 1.00 | 3.000 ± 1.414 | 1.00 |\n"
	if !strings.HasSuffix(buf.String(), want) || rep.Reference == nil || *rep.Reference != 0 {
		t.Errorf("markdown:\n%s\nwant last row\n%s", buf.String(), want)
	}
}

// The whole system's energy has its spread and its net energy against
// the idle system's power, where every run and idle window has it.
func TestTheSystemsEnergyAgainstItsIdlePower(t *testing.T) {
	sys := func(x float64) *wire.Num { n := wire.Num(x); return &n }
	run := func(joules, system float64) Run {
		r := runOf(joules, 1)
		r.EnergyJoules.System = sys(system)
		return r
	}
	ws := []Window{{Seconds: 1, Watts: 1, SystemWatts: 30, HasSystem: true}, {Seconds: 1, Watts: 1, SystemWatts: 34, HasSystem: true}}
	rep := NewReport(100 * time.Millisecond)
	rep.Baseline = NewBaseline(NewIdle(time.Now(), 2*time.Second, ws), nil, ws)
	rep.Results = []Result{{Command: "x", Runs: []Run{run(5, 40), run(7, 44)}}}
	rep.Finish(-1)
	r := rep.Results[0]
	if b := rep.Baseline.SystemPowerWatts; b == nil || *b != 32 {
		t.Fatalf("idle system power %v, want 32 W", b)
	}
	if r.SystemEnergyJoules == nil || r.SystemEnergyJoules.Mean != 42 || r.NetSystemEnergyJoules == nil || r.NetSystemEnergyJoules.Mean != 10 ||
		*r.Runs[0].NetSystemEnergyJoules != 8 {
		t.Errorf("system %+v, net %+v, run's net %v; want 42 J, 10 J and 8 J", r.SystemEnergyJoules, r.NetSystemEnergyJoules, r.Runs[0].NetSystemEnergyJoules)
	}
	// The exports carry it: CSV's last columns, Markdown's last.
	rows := csvRows(t, rep)
	if n := len(rows[0]); rows[0][n-4] != "system_energy_mean" || rows[1][n-4] != "42" || rows[0][n-2] != "net_system_energy_mean" || rows[1][n-2] != "10" {
		t.Errorf("csv:\n%v", rows)
	}
	var buf bytes.Buffer
	WriteMarkdown(&buf, rep)
	if md := buf.String(); !strings.Contains(md, " System energy [J] |\n") || !strings.HasSuffix(md, " | 42.000 ± 2.828 |\n") {
		t.Errorf("markdown:\n%s", md)
	}
	// The text says the system's energy, its net, and the idle power it
	// is net of.
	buf.Reset()
	WriteText(&buf, rep, &output.Styles{Plain: true})
	for _, want := range []string{"\n  the whole Mac idle: 32.00 W (what net system is net of)\n", "\n  System energy (mean ± σ): ", ";  net system 10.00 J ± "} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("no %q in the text:\n%s", want, buf.String())
		}
	}
	// A run without the system's energy: no spread of it.
	rep.Results = []Result{{Command: "y", Runs: []Run{run(5, 40), runOf(6, 1)}}}
	rep.Finish(-1)
	if rep.Results[0].SystemEnergyJoules != nil {
		t.Errorf("a spread over some runs: %+v", rep.Results[0].SystemEnergyJoules)
	}
}
