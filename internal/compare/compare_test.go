package compare

import (
	"bytes"
	"cmp"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/bench"
	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/wire"
)

// command is a command of a made-up bench: its runs' net energies (each
// run lasting a second, at an idle power of idleWatts), and their units
// of work where the bench counts them.
type command struct {
	name  string
	net   []float64
	units []float64
}

// benchOf is a bench as exopower bench writes it (its own types, through
// its own JSON), over a baseline of idle ± se watts (none for idle 0),
// on mac.
type benchOf struct {
	mac, tool string
	idle, se  float64
	unit      string
	commands  []command
}

const idleWatts = 4.5

func (b benchOf) json(t *testing.T) []byte {
	t.Helper()
	rep := bench.NewReport(100 * time.Millisecond)
	rep.Source = wire.Source{Tool: b.tool, HWModel: b.mac, OSBuild: "23E224"}
	if rep.Source.Tool == "" {
		rep.Source.Tool = "powermetrics"
	}
	if rep.Source.HWModel == "" {
		rep.Source.HWModel = "MacBookPro17,1"
	}
	if b.unit != "" {
		rep.Unit = &b.unit
	}
	if b.idle > 0 {
		se := wire.Num(b.se)
		rep.Baseline = &bench.Baseline{PowerWatts: wire.Num(b.idle), StandardErrorWatts: &se, DurationSeconds: 2,
			Before: &bench.Idle{PowerWatts: wire.Num(b.idle), Spans: 2}, After: &bench.Idle{PowerWatts: wire.Num(b.idle), Spans: 2}}
	}
	for _, c := range b.commands {
		res := bench.Result{Command: c.name, Parameters: map[string]string{}}
		for i, x := range c.net {
			// A second at the Mac's idle power, and the command's own.
			run := bench.Run{DurationSeconds: 1, EnergyJoules: wire.Components{Total: wire.Num(x + cmp.Or(b.idle, idleWatts))}, Coverage: 1}
			if b.idle > 0 {
				net, u := wire.Num(x), wire.Num(b.se)
				run.NetEnergyJoules, run.NetEnergyUncertaintyJoules = &net, &u
			}
			if c.units != nil {
				u := wire.Num(c.units[i])
				run.Units = &u
			}
			res.Runs = append(res.Runs, run)
		}
		rep.Results = append(rep.Results, res)
	}
	var buf bytes.Buffer
	if err := output.WriteJSON(&buf, rep); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func (b benchOf) load(t *testing.T, name string) *Export {
	t.Helper()
	e, err := Load(name, b.json(t))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// spread is n values around m, symmetric, ± d.
func spread(m, d float64) []float64 {
	return []float64{m - d, m + d, m - d/2, m + d/2, m, m - d, m + d, m, m - d/3, m + d/3}
}

func compareOrFail(t *testing.T, old, new benchOf, o Options) *Report {
	t.Helper()
	rep, err := Compare(old.load(t, "old.json"), new.load(t, "new.json"), o)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// A command 10 % costlier regressed, one 10 % cheaper improved, one 1 %
// costlier (significantly) and one not changed at all are unchanged; the
// comparison fails on the regression alone, or on both changes with
// --fail-on changed, or never.
func TestVerdictsAndWhatFailsTheComparison(t *testing.T) {
	old := benchOf{idle: idleWatts, se: 0.0001, commands: []command{
		{name: "costlier", net: spread(2, 0.01)}, {name: "cheaper", net: spread(2, 0.01)},
		{name: "a little costlier", net: spread(2, 0.001)}, {name: "same", net: spread(2, 0.01)},
	}}
	new := benchOf{idle: idleWatts, se: 0.0001, commands: []command{
		{name: "costlier", net: spread(2.2, 0.01)}, {name: "cheaper", net: spread(1.8, 0.01)},
		{name: "a little costlier", net: spread(2.02, 0.001)}, {name: "same", net: spread(2, 0.012)},
	}}
	rep := compareOrFail(t, old, new, Defaults)
	want := map[string]string{"costlier": Regressed, "cheaper": Improved, "a little costlier": Unchanged, "same": Unchanged}
	for _, r := range rep.Rows {
		if r.Verdict != want[r.Name] || r.Measure != "net-energy" || r.Unit != "J" {
			t.Errorf("%s: %s of %s [%s], want %s of net-energy [J]", r.Name, r.Verdict, r.Measure, r.Unit, want[r.Name])
		}
		if r.Name == "a little costlier" && !(float64(*r.PValue) < 0.05) {
			t.Errorf("%s: p = %v: the made-up 1 %% should be significant, and unchanged for being within 5 %%", r.Name, *r.PValue)
		}
	}
	if rep.Regressed != 1 || rep.Improved != 1 || rep.Unchanged != 2 || !rep.Failed {
		t.Errorf("counts %d regressed, %d improved, %d unchanged, failed %v", rep.Regressed, rep.Improved, rep.Unchanged, rep.Failed)
	}
	var e *cli.Error
	if err := rep.Verdict(); !errors.As(err, &e) || e.Status != 1 || !strings.Contains(err.Error(), "costlier (net energy +10.0 %)") {
		t.Errorf("verdict %v, want status 1 naming the regression", err)
	}
	for failOn, failed := range map[string]bool{FailChanged: true, FailNever: false} {
		o := Defaults
		o.FailOn = failOn
		if rep := compareOrFail(t, old, new, o); rep.Failed != failed || (rep.Verdict() == nil) == failed {
			t.Errorf("--fail-on %s: failed %v, verdict %v", failOn, rep.Failed, rep.Verdict())
		}
	}
	o := Defaults
	o.Threshold = 0.15
	if rep := compareOrFail(t, old, new, o); rep.Regressed != 0 || rep.Failed {
		t.Errorf("--threshold 15%%: %d regressed, failed %v, want none: the change is 10 %%", rep.Regressed, rep.Failed)
	}
}

// A change beyond the threshold that chance could have made is no
// regression: the runs' spread is as large as the change.
func TestALargeChangeWithinTheNoiseIsUnchanged(t *testing.T) {
	old := benchOf{commands: []command{{name: "noisy", net: spread(2, 1.2)}}}
	new := benchOf{commands: []command{{name: "noisy", net: spread(2.65, 1.2)}}}
	rep := compareOrFail(t, old, new, Defaults)
	r := rep.Rows[0]
	if r.Verdict != Unchanged || float64(*r.Change) < 0.09 || float64(*r.PValue) < 0.05 {
		t.Errorf("%s, change %v, p %v: want unchanged, +10 %% but not significant", r.Verdict, *r.Change, *r.PValue)
	}
	if r.Measure != "energy" {
		t.Errorf("measure %s without a baseline, want the gross energy", r.Measure)
	}
}

// Where OLD's net energy cannot be told from the idle Mac's, a ratio to
// it means nothing: the gross energies are compared, and a note says
// why.
func TestANetEnergyOfNothingIsComparedGross(t *testing.T) {
	old := benchOf{idle: idleWatts, se: 0.001, commands: []command{{name: "sleep", net: spread(0, 0.002)}}}
	new := benchOf{idle: idleWatts, se: 0.001, commands: []command{{name: "sleep", net: spread(0.001, 0.002)}}}
	r := compareOrFail(t, old, new, Defaults).Rows[0]
	if r.Measure != "energy" || len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "cannot be told from the idle Mac's") || r.Verdict != Unchanged {
		t.Errorf("%s, %s, notes %q: want the gross energy compared, and why", r.Measure, r.Verdict, r.Notes)
	}
}

// Where the gross energies are compared and the idle power differs
// beyond its errors, the change is the Mac's background's as much as the
// command's: no verdict, and a note says why, where the gross energy of
// a command that did nothing new rose by the idle power's rise.
func TestAGrossChangeOfTheIdlePowerIsNoVerdict(t *testing.T) {
	old := benchOf{idle: 12.5, se: 0.01, commands: []command{{name: "sleep", net: spread(0, 0.002)}}}
	new := benchOf{idle: 16.5, se: 0.01, commands: []command{{name: "sleep", net: spread(0, 0.002)}}}
	rep := compareOrFail(t, old, new, Defaults)
	r := rep.Rows[0]
	if r.Measure != "energy" || r.Verdict != Untested || rep.Failed || !strings.Contains(strings.Join(r.Notes, " "), "was regressed, but the gross energy holds the idle power") {
		t.Errorf("%s, %s, failed %v, notes %q: want the gross energy untested, and why", r.Measure, r.Verdict, rep.Failed, r.Notes)
	}
}

// The energy per unit of work is a figure of its own, net where the
// runs' energies are.
func TestEnergyPerUnitIsComparedToo(t *testing.T) {
	units := []float64{100, 100, 100, 100, 100, 100, 100, 100, 100, 100}
	old := benchOf{idle: idleWatts, se: 0.0001, unit: "token", commands: []command{{name: "gen", net: spread(2, 0.01), units: units}}}
	more := make([]float64, 10)
	for i := range more {
		more[i] = 125
	}
	new := benchOf{idle: idleWatts, se: 0.0001, unit: "token", commands: []command{{name: "gen", net: spread(2, 0.01), units: more}}}
	rep := compareOrFail(t, old, new, Defaults)
	if len(rep.Rows) != 2 {
		t.Fatalf("%d rows, want the energy and the energy per token", len(rep.Rows))
	}
	r := rep.Rows[1]
	if r.Measure != "net-energy-per-token" || r.Unit != "J/token" || r.Verdict != Improved || !nearly(float64(*r.Ratio), 0.8) {
		t.Errorf("%s [%s]: %s, ratio %v: want net-energy-per-token improved by 20 %%", r.Measure, r.Unit, r.Verdict, *r.Ratio)
	}
	if rep.Rows[0].Verdict != Unchanged {
		t.Errorf("energy %s, want unchanged", rep.Rows[0].Verdict)
	}
}

func nearly(a, b float64) bool { return a > b*(1-1e-9) && a < b*(1+1e-9) }

// One run a side has no spread: no test, the verdict is untested, and
// the comparison does not fail on it.
func TestOneRunIsUntested(t *testing.T) {
	old := benchOf{commands: []command{{name: "once", net: []float64{2}}}}
	new := benchOf{commands: []command{{name: "once", net: []float64{3}}}}
	rep := compareOrFail(t, old, new, Defaults)
	r := rep.Rows[0]
	if r.Verdict != Untested || r.PValue != nil || r.Ratio == nil || rep.Failed || !strings.Contains(r.Notes[0], "one value") {
		t.Errorf("%s, p %v, ratio %v, failed %v, notes %q: want untested with the ratio alone", r.Verdict, r.PValue, r.Ratio, rep.Failed, r.Notes)
	}
}

// Benchmarks are matched by name, whatever their order; one that only
// one export has is listed, not compared. By position, the names may
// differ.
func TestBenchmarksAreMatchedByNameOrPosition(t *testing.T) {
	old := benchOf{commands: []command{{name: "a", net: spread(1, 0.01)}, {name: "b", net: spread(2, 0.01)}, {name: "gone", net: spread(3, 0.01)}}}
	new := benchOf{commands: []command{{name: "b", net: spread(2, 0.01)}, {name: "a", net: spread(1, 0.01)}, {name: "added", net: spread(3, 0.01)}}}
	rep := compareOrFail(t, old, new, Defaults)
	if len(rep.Rows) != 2 || rep.Rows[0].Name != "b" || rep.Rows[1].Name != "a" || rep.Rows[0].Verdict != Unchanged {
		t.Errorf("rows %+v, want b then a, unchanged", rep.Rows)
	}
	if strings.Join(rep.OnlyInOld, ",") != "gone" || strings.Join(rep.OnlyInNew, ",") != "added" || rep.MatchedBy != "name" {
		t.Errorf("only in old %q, only in new %q, matched by %s", rep.OnlyInOld, rep.OnlyInNew, rep.MatchedBy)
	}
	o := Defaults
	o.ByPosition = true
	rep = compareOrFail(t, old, new, o)
	if len(rep.Rows) != 3 || rep.Rows[0].Name != "b" || rep.Rows[0].OldName != "a" || rep.Rows[0].Verdict != Regressed || rep.MatchedBy != "position" {
		t.Errorf("by position: rows %+v", rep.Rows)
	}
}

// What cannot be compared is refused, each with its reason: a bench
// against an llm run, other units of work, the same export twice, and
// two exports without a benchmark in common.
func TestWhatMeasuresDifferentThingsIsRefused(t *testing.T) {
	b := benchOf{unit: "token", commands: []command{{name: "a", net: spread(1, 0.01), units: spread(10, 0)}}}
	llm, err := Load("llm.json", []byte(`{"schema_version":1,"type":"llm","results":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	other := b
	other.unit = "request"
	renamed := benchOf{commands: []command{{name: "z", net: spread(1, 0.02)}}}
	for _, c := range []struct {
		name     string
		old, new *Export
		want     string
	}{
		{"a bench and an llm run", b.load(t, "a.json"), llm, "they measure different things"},
		{"other units", b.load(t, "a.json"), other.load(t, "b.json"), `counts units of work of "token"`},
		{"the same bench twice", b.load(t, "a.json"), b.load(t, "copy.json"), "hold the same bench"},
		{"nothing in common", b.load(t, "a.json"), renamed.load(t, "b.json"), "no benchmark in common"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Compare(c.old, c.new, Defaults)
			var e *cli.Error
			if !errors.As(err, &e) || e.Status != cli.StatusFailure || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want status 125 and %q", err, c.want)
			}
		})
	}
}

// What makes two exports unfair to compare is said, and compared all
// the same: another Mac, source, interval, an idle power that differs
// beyond its errors, a side without a baseline, a run cut short.
func TestUnfairComparisonsAreWarnedOf(t *testing.T) {
	cmds := []command{{name: "a", net: spread(1, 0.01)}}
	base := benchOf{idle: idleWatts, se: 0.001, commands: cmds}
	for _, c := range []struct {
		name string
		new  benchOf
		want string
	}{
		{"another Mac", benchOf{mac: "Mac14,2", idle: idleWatts, se: 0.001, commands: cmds}, "the Macs differ: MacBookPro17,1 in old.json, Mac14,2 in new.json"},
		{"another source", benchOf{tool: "ioreport", idle: idleWatts, se: 0.001, commands: cmds}, "the sources differ"},
		{"an idle power beyond its errors", benchOf{idle: 4.6, se: 0.001, commands: cmds}, "the idle power differs beyond its errors: 4.500 W ± 0.001 W in old.json, 4.600 W ± 0.001 W in new.json"},
		{"no baseline", benchOf{commands: cmds}, "new.json has no idle baseline"},
		{"units on one side", benchOf{idle: idleWatts, se: 0.001, unit: "token", commands: []command{{name: "a", net: spread(1, 0.01), units: spread(10, 0)}}},
			"new.json counts units of work (token) and old.json none: the energy per token is not compared"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep := compareOrFail(t, base, c.new, Defaults)
			if !strings.Contains(strings.Join(rep.Warnings, "\n"), c.want) {
				t.Errorf("warnings %q, want %q", rep.Warnings, c.want)
			}
		})
	}
	if rep := compareOrFail(t, base, benchOf{idle: 4.5005, se: 0.001, commands: cmds}, Defaults); len(rep.Warnings) != 0 {
		t.Errorf("idle powers within their errors: warnings %q", rep.Warnings)
	}
	// A bench cut short says so in its JSON.
	data := bytes.Replace(base.json(t), []byte(`"complete":true`), []byte(`"complete":false`), 1)
	short, err := Load("short.json", data)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Compare(short, base.load(t, "new.json"), Defaults)
	if err != nil || !strings.Contains(strings.Join(rep.Warnings, "\n"), "short.json was cut short") {
		t.Errorf("%v, warnings %q, want the cut said", err, rep.Warnings)
	}
}

// Options that cannot be used are refused.
func TestBadOptionsAreRefused(t *testing.T) {
	for _, o := range []Options{{Alpha: 0, Threshold: 0.05, FailOn: FailRegressed}, {Alpha: 0.5, Threshold: 0.05, FailOn: FailRegressed},
		{Alpha: 0.05, Threshold: -0.01, FailOn: FailRegressed}, {Alpha: 0.05, Threshold: 0.05, FailOn: "slower"}} {
		if err := o.Check(); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}
