package bench

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
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

// spans are pieces of an idle span, one a window.
func spans(ws ...Window) []IdleSpan {
	var out []IdleSpan
	for _, w := range ws {
		out = append(out, IdleSpan{Start: time.Unix(1_700_000_000, 0), Window: w, Windows: 5})
	}
	return out
}

// pieceOf is a piece of half a second at watts.
func pieceOf(watts float64) Window { return Window{Seconds: 0.5, Watts: watts} }

func TestNetEnergyIsEnergyLessIdlePowerOverTheDuration(t *testing.T) {
	// Idle 2 W ± 0.058 W: four pieces of 0.5 s at 1.9, 2.1, 1.9, 2.1 W.
	ws := []Window{pieceOf(1.9), pieceOf(2.1), pieceOf(1.9), pieceOf(2.1)}
	rep := NewReport(100 * time.Millisecond)
	rep.Baseline = NewBaseline(spans(ws...), nil, nil)
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
		if js, _ := json.Marshal(rep.Results[0]); c.want == "" && !strings.Contains(string(js), `"warnings":[]`) {
			t.Errorf("nothing to warn of: JSON %s, want an empty list of warnings", js)
		}
	}
}

func TestNetEnergyWithinTheBaselinesErrorIsNotSignificant(t *testing.T) {
	rep := NewReport(100 * time.Millisecond)
	rep.Baseline = NewBaseline(spans(Window{Seconds: 1, Watts: 1}, Window{Seconds: 1, Watts: 3}), nil, nil)
	rep.Results = []Result{{Command: "x", Runs: []Run{runOf(2.5, 1)}}}
	rep.Finish(-1)
	if w := strings.Join(rep.Results[0].Warnings, "\n"); !strings.Contains(w, "cannot be told apart from idle") {
		t.Errorf("no warning that net 0.5 J ± 1 J is not significant: %q", w)
	}
}

// The idle power before and after differ beyond the spread of the
// pieces within each span: a drift. Alike, or with no spread within the
// spans to tell it by, none.
func TestBaselineDrift(t *testing.T) {
	a := spans(pieceOf(2.0), pieceOf(2.1), pieceOf(1.9))
	b := spans(pieceOf(4.0), pieceOf(4.1), pieceOf(3.9))
	if _, ok := NewBaseline(a, nil, b).Drifted(); !ok {
		t.Error("2 W before and 4 W after, each ± 0.06 W: no drift said")
	}
	if msg, ok := NewBaseline(a, nil, a).Drifted(); ok {
		t.Errorf("the same idle power before and after: %s", msg)
	}
	if msg, ok := NewBaseline(a[:1], nil, b[:1]).Drifted(); ok {
		t.Errorf("a piece before and a piece after have no spread to tell a drift by: %s", msg)
	}
	if NewBaseline(a, b, nil).After != nil {
		t.Error("no span after, yet an After")
	}
}

// Student's t test: the difference of the spans' means over the error
// the pooled spread within them gives, against t's 99.73 % point for
// their degrees of freedom (6.62 for four, where a normal's is 3).
func TestDriftIsStudentsTest(t *testing.T) {
	// Before 2, 2.2, 2.1 (mean 2.1); after 2.3, 2.5, 2.4 (mean 2.4).
	// Within each: squares 0.02, pooled variance 0.04/4 = 0.01; the
	// error of the difference √(0.01/3 + 0.01/3) = 0.0816: 0.3 W is
	// 3.67 of them, beyond a normal's 3 but within t's 6.62.
	before := []Window{pieceOf(2), pieceOf(2.2), pieceOf(2.1)}
	after := []Window{pieceOf(2.3), pieceOf(2.5), pieceOf(2.4)}
	if Drift(before, after) {
		t.Error("3.67 standard errors apart with 4 degrees of freedom: a drift said")
	}
	// 0.6 W apart: 7.3 of them.
	after = []Window{pieceOf(2.6), pieceOf(2.8), pieceOf(2.7)}
	if !Drift(before, after) {
		t.Error("7.3 standard errors apart with 4 degrees of freedom: no drift said")
	}
}

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
	n := len(rows[0]) - costColumnCount - wallColumnCount // the system's columns end where the wall's begin
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
	rep.Baseline = NewBaseline(spans(ws...), nil, nil)
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
	if n := len(rows[0]) - costColumnCount - wallColumnCount; rows[0][n-4] != "system_energy_mean" || rows[1][n-4] != "42" || rows[0][n-2] != "net_system_energy_mean" || rows[1][n-2] != "10" {
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
