// Package compare is exopower compare: two exports of bench or llm, made
// at different times, side by side. It matches each benchmark of one with
// the other's (by name, or by position), tests each figure's change with
// Welch's t-test and gives the ratio of the means its confidence interval
// by Fieller's theorem, and says of each whether it regressed, improved
// or stayed as it was: a change counts only when it is significant (at
// alpha) and beyond a threshold. It says where the two cannot be
// compared fairly (another Mac, source, interval, idle power), refuses
// where they measure different things, and renders the verdicts for
// people, for a pull request, as JSON, and in the formats that
// github-action-benchmark and Bencher keep histories of. Everything here
// is pure: bytes in, a report out, text written to an io.Writer.
package compare

import (
	"bytes"
	"fmt"
	"math"
	"strings"

	"github.com/exopower/exopower/internal/bench"
	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/wire"
)

// SchemaVersion is the version of compare's JSON; it grows when a field
// changes meaning or goes away, not when one is added.
const SchemaVersion = 1

// The verdicts of a row.
const (
	Regressed = "regressed"
	Improved  = "improved"
	Unchanged = "unchanged"
	// Untested: no test could be made (a side with fewer than two
	// values, or a mean not above zero to take a ratio to).
	Untested = "untested"
)

// The values of Options.FailOn: the verdicts that fail a comparison.
const (
	FailRegressed = "regressed"
	FailChanged   = "changed"
	FailNever     = "never"
)

// Options are how two exports are compared.
type Options struct {
	// Alpha is the test's significance level, and 1−Alpha the
	// confidence of the ratio's interval: 0.05 by default.
	Alpha float64
	// Threshold is the least change that counts, as a fraction of the
	// old mean: 0.05 (5 %) by default.
	Threshold float64
	// FailOn says which verdicts fail the comparison: FailRegressed
	// (the default), FailChanged (regressed or improved) or FailNever.
	FailOn string
	// ByPosition matches the benchmarks by their place in each export
	// rather than by name.
	ByPosition bool
}

// Defaults are the options that compare takes by default.
var Defaults = Options{Alpha: 0.05, Threshold: 0.05, FailOn: FailRegressed}

// Check refuses options that cannot be used.
func (o Options) Check() error {
	switch {
	case !(o.Alpha > 0 && o.Alpha < 0.5):
		return cli.Fail(fmt.Errorf("--alpha %v: it takes a probability above 0 and below 0.5", o.Alpha), "0.05, the default, is the usual; 0.01 for fewer false alarms")
	case !(o.Threshold >= 0 && o.Threshold <= 10):
		return cli.Fail(fmt.Errorf("--threshold %v%%: it takes a percentage from 0 to 1000", o.Threshold*100), "5%, the default, ignores changes smaller than 5 %")
	}
	switch o.FailOn {
	case FailRegressed, FailChanged, FailNever:
		return nil
	}
	return cli.Fail(fmt.Errorf("--fail-on %q: it takes regressed, changed or never", o.FailOn))
}

// Report is the comparison of two exports: the JSON of exopower compare
// --json, and what its text and Markdown show.
type Report struct {
	SchemaVersion int `json:"schema_version"`
	// Type is "compare"; Kind what was compared, "bench" or "llm".
	Type string `json:"type"`
	Kind string `json:"kind"`
	Old  Side   `json:"old"`
	New  Side   `json:"new"`
	// Test names the test: "welch".
	Test string `json:"test"`
	// Alpha, Threshold (a fraction of the old mean) and FailOn are the
	// options the verdicts were made with; MatchedBy is "name" or
	// "position".
	Alpha     wire.Num `json:"alpha"`
	Threshold wire.Num `json:"threshold"`
	FailOn    string   `json:"fail_on"`
	MatchedBy string   `json:"matched_by"`
	Rows      []Row    `json:"rows"`
	// OnlyInOld and OnlyInNew name the benchmarks that the other export
	// lacks: listed, never compared.
	OnlyInOld []string `json:"only_in_old"`
	OnlyInNew []string `json:"only_in_new"`
	// The count of rows of each verdict.
	Regressed int `json:"regressed"`
	Improved  int `json:"improved"`
	Unchanged int `json:"unchanged"`
	Untested  int `json:"untested"`
	// Failed says the verdicts fail the comparison, as FailOn says:
	// exopower exits with 1.
	Failed   bool     `json:"failed"`
	Warnings []string `json:"warnings"`
}

// Side is what the report says of one export.
type Side struct {
	File     string      `json:"file"`
	Complete bool        `json:"complete"`
	Source   wire.Source `json:"source"`
	Scope    string      `json:"scope"`
	// IntervalSeconds is the source's sample interval.
	IntervalSeconds wire.Num `json:"interval_seconds"`
	// IdlePowerWatts is the idle baseline's power and
	// IdleStandardErrorWatts its standard error; null without.
	IdlePowerWatts         *wire.Num `json:"idle_power_watts"`
	IdleStandardErrorWatts *wire.Num `json:"idle_standard_error_watts"`
	// Unit is bench's unit of work; null without.
	Unit *string `json:"unit"`
}

// Row is one figure of one benchmark in both exports.
type Row struct {
	// Name is the benchmark's name in the new export; OldName in the
	// old, the same unless matched by position.
	Name    string `json:"name"`
	OldName string `json:"old_name"`
	// Measure is the figure's slug ("net-energy", "energy-per-token"),
	// Unit its unit ("J", "J/token").
	Measure string `json:"measure"`
	Unit    string `json:"unit"`
	// Old and New are each side's values; null where a side has none.
	Old *Stats `json:"old"`
	New *Stats `json:"new"`
	// Ratio is the new mean over the old; RatioLow and RatioHigh its
	// 1−alpha confidence interval (Fieller's), null where unbounded;
	// Change is Ratio − 1.
	Ratio     *wire.Num `json:"ratio"`
	RatioLow  *wire.Num `json:"ratio_low"`
	RatioHigh *wire.Num `json:"ratio_high"`
	Change    *wire.Num `json:"change"`
	// T, DegreesOfFreedom and PValue are Welch's t-test's; null where
	// no test could be made.
	T                *wire.Num `json:"t"`
	DegreesOfFreedom *wire.Num `json:"degrees_of_freedom"`
	PValue           *wire.Num `json:"p_value"`
	Verdict          string    `json:"verdict"`
	// Notes say what was compared instead, or why there is no test.
	Notes []string `json:"notes"`
	// Cost and CO2e are the change's cost and CO2e (Report.Price);
	// null without a price, or a carbon intensity, or a side's values.
	Cost *RowCost `json:"cost"`
	CO2e *RowCO2e `json:"co2e"`

	label string // the figure's name for people
}

// Label is the figure's name for people: "net energy", "energy per
// token".
func (r Row) Label() string { return r.label }

// Stats are one side's values of a figure.
type Stats struct {
	N    int      `json:"n"`
	Mean wire.Num `json:"mean"`
	// Stddev is the values' (n−1); null for one value.
	Stddev *wire.Num `json:"stddev"`
	// BaselineUncertainty is the idle power's standard error over the
	// values' mean duration (per unit, for a figure per unit), which
	// every value shares; null for a gross figure.
	BaselineUncertainty *wire.Num `json:"baseline_uncertainty"`
}

// Compare compares new with old. It refuses exports that measure
// different things, and two that hold the same bench.
func Compare(old, new *Export, o Options) (*Report, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	if err := comparable(old, new); err != nil {
		return nil, err
	}
	pairs, onlyOld, onlyNew := match(old, new, o.ByPosition)
	if len(pairs) == 0 {
		hint := "name the commands alike in both (bench -n NAME), or match them in order with --by-position"
		if o.ByPosition {
			hint = "one of them has no benchmark"
		}
		return nil, cli.Fail(fmt.Errorf("%s and %s have no benchmark in common: nothing to compare", old.Name, new.Name), hint)
	}
	rep := &Report{SchemaVersion: SchemaVersion, Type: "compare", Kind: old.Kind, Old: sideOf(old), New: sideOf(new),
		Test: "welch", Alpha: wire.Num(o.Alpha), Threshold: wire.Num(o.Threshold), FailOn: o.FailOn, MatchedBy: "name",
		Rows: []Row{}, OnlyInOld: onlyOld, OnlyInNew: onlyNew, Warnings: fairness(old, new)}
	if o.ByPosition {
		rep.MatchedBy = "position"
	}
	for _, p := range pairs {
		for _, f := range p.old.Figures {
			nf, ok := figure(p.new, f.Slug)
			if !ok {
				continue
			}
			row := o.row(f, nf, old.Name, new.Name)
			row.Name, row.OldName = p.new.Name, p.old.Name
			confounded(&row, old, new)
			rep.Rows = append(rep.Rows, row)
		}
	}
	rep.count(o)
	return rep, nil
}

// count counts the rows of each verdict, and says whether they fail.
func (rep *Report) count(o Options) {
	for _, r := range rep.Rows {
		switch r.Verdict {
		case Regressed:
			rep.Regressed++
		case Improved:
			rep.Improved++
		case Unchanged:
			rep.Unchanged++
		default:
			rep.Untested++
		}
	}
	switch o.FailOn {
	case FailRegressed:
		rep.Failed = rep.Regressed > 0
	case FailChanged:
		rep.Failed = rep.Regressed+rep.Improved > 0
	}
}

func figure(b *Benchmark, slug string) (Figure, bool) {
	for _, f := range b.Figures {
		if f.Slug == slug {
			return f, true
		}
	}
	return Figure{}, false
}

// comparable refuses two exports that measure different things, and the
// same export twice.
func comparable(old, new *Export) error {
	if old.Kind != new.Kind {
		return cli.Fail(fmt.Errorf("%s is a %s's JSON and %s an %s's: they measure different things", old.Name, old.Kind, new.Name, new.Kind),
			"compare two benches, or two llm runs")
	}
	if bytes.Equal(old.digest[:], new.digest[:]) {
		return cli.Fail(fmt.Errorf("%s and %s hold the same %s: a run compared with itself tells nothing", old.Name, new.Name, old.Kind),
			"compare the saved export with a new one: bench --export-json NEW.json, then compare OLD.json NEW.json")
	}
	if old.Unit != "" && new.Unit != "" && old.Unit != new.Unit {
		return cli.Fail(fmt.Errorf("%s counts units of work of %q and %s of %q: their energies per unit measure different things", old.Name, old.Unit, new.Name, new.Unit),
			"bench both with the same --unit")
	}
	return nil
}

type pair struct{ old, new *Benchmark }

// match pairs the benchmarks of old and new by name (in new's order),
// or by position; those without a partner are named, never guessed at.
func match(old, new *Export, byPosition bool) (pairs []pair, onlyOld, onlyNew []string) {
	onlyOld, onlyNew = []string{}, []string{}
	if byPosition {
		for i := range new.Benchmarks {
			if i < len(old.Benchmarks) {
				pairs = append(pairs, pair{&old.Benchmarks[i], &new.Benchmarks[i]})
			} else {
				onlyNew = append(onlyNew, new.Benchmarks[i].Name)
			}
		}
		for i := len(new.Benchmarks); i < len(old.Benchmarks); i++ {
			onlyOld = append(onlyOld, old.Benchmarks[i].Name)
		}
		return pairs, onlyOld, onlyNew
	}
	byKey := map[string]*Benchmark{}
	for i := range old.Benchmarks {
		byKey[old.Benchmarks[i].Key] = &old.Benchmarks[i]
	}
	matched := map[string]bool{}
	for i := range new.Benchmarks {
		n := &new.Benchmarks[i]
		if o, ok := byKey[n.Key]; ok {
			pairs, matched[n.Key] = append(pairs, pair{o, n}), true
		} else {
			onlyNew = append(onlyNew, n.Name)
		}
	}
	for _, o := range old.Benchmarks {
		if !matched[o.Key] {
			onlyOld = append(onlyOld, o.Name)
		}
	}
	return pairs, onlyOld, onlyNew
}

func sideOf(e *Export) Side {
	s := Side{File: e.Name, Complete: e.Complete, Source: e.Source, Scope: e.Scope, IntervalSeconds: wire.Num(e.IntervalSeconds)}
	if e.Idle != nil {
		s.IdlePowerWatts, s.IdleStandardErrorWatts = num(e.Idle.Watts), num(e.Idle.SE)
	}
	if e.Unit != "" {
		u := e.Unit
		s.Unit = &u
	}
	return s
}

// fairness warns of what makes the two exports' figures differ besides
// the change: another Mac, source, macOS, scope, interval or idle power,
// a side without a baseline, a run cut short.
func fairness(old, new *Export) []string {
	w := []string{}
	differ := func(what, a, b, why string) {
		if a != b {
			w = append(w, fmt.Sprintf("%s differ: %s in %s, %s in %s: %s", what, orNone(a), old.Name, orNone(b), new.Name, why))
		}
	}
	differ("the Macs", old.Source.HWModel, new.Source.HWModel, "one Mac draws more than another for the same work; compare runs made on one Mac")
	differ("the sources", old.Source.Tool, new.Source.Tool, "powermetrics and IOReport read the SoC's energy differently; measure both with one --source")
	differ("the macOS builds", old.Source.OSBuild, new.Source.OSBuild, "macOS itself may have changed the energy")
	differ("the scopes", old.Scope, new.Scope, "they measure different parts of the Mac")
	if old.IntervalSeconds != new.IntervalSeconds {
		w = append(w, fmt.Sprintf("the sample intervals differ: %s in %s, %s in %s: the edges of short runs are measured differently; bench both with one -i",
			output.Seconds(old.IntervalSeconds), old.Name, output.Seconds(new.IntervalSeconds), new.Name))
	}
	if old.Nodes != new.Nodes {
		w = append(w, fmt.Sprintf("%s measured %s and %s %s: their energies are sums over different Macs", old.Name, output.Count(old.Nodes, "Mac"), new.Name, output.Count(new.Nodes, "Mac")))
	}
	if (old.Unit == "") != (new.Unit == "") {
		with, without, unit := old.Name, new.Name, old.Unit
		if old.Unit == "" {
			with, without, unit = new.Name, old.Name, new.Unit
		}
		w = append(w, fmt.Sprintf("%s counts units of work (%s) and %s none: the energy per %s is not compared", with, unit, without, unit))
	}
	w = append(w, idleFairness(old, new)...)
	for _, e := range []*Export{old, new} {
		if !e.Complete {
			w = append(w, fmt.Sprintf("%s was cut short: its figures are of the runs made by then", e.Name))
		}
	}
	if old.Kind == "llm" {
		differ("the APIs", old.API, new.API, "chat and completions requests are not the same work")
		if old.PromptSeed != nil && new.PromptSeed != nil && *old.PromptSeed != *new.PromptSeed {
			w = append(w, fmt.Sprintf("the prompts were made from different seeds (%d in %s, %d in %s): the same lengths but other words; llm --seed makes the same prompts",
				*old.PromptSeed, old.Name, *new.PromptSeed, new.Name))
		}
	}
	return w
}

// confounded takes the verdict from a row of gross energy where the idle
// powers differ beyond their errors: the change is as much the Mac's
// background as the command's (a run's gross energy holds the idle power
// times its duration), and a CI job must not fail on a Mac that was
// busier. The net figures would tell them apart, where the old net can
// be told from idle.
func confounded(row *Row, old, new *Export) {
	a, b := old.Idle, new.Idle
	if strings.HasPrefix(row.Measure, "net-") || (row.Verdict != Regressed && row.Verdict != Improved) || a == nil || b == nil ||
		math.IsNaN(a.SE) || math.IsNaN(b.SE) || !bench.Differ(a.Watts, a.SE, b.Watts, b.SE) {
		return
	}
	row.Notes = append(row.Notes, fmt.Sprintf("was %s, but the gross %s holds the idle power, which differs beyond its errors (%s in %s, %s in %s): "+
		"the change may be the Mac's background; run bench with more runs or longer commands, so that the net can be told from idle",
		row.Verdict, row.label, output.Watts(a.Watts), old.Name, output.Watts(b.Watts), new.Name))
	row.Verdict = Untested
}

// idleFairness warns where one export has a baseline and the other not,
// and where the idle powers differ beyond their errors (three standard
// errors, as bench tells a drift).
func idleFairness(old, new *Export) []string {
	a, b := old.Idle, new.Idle
	switch {
	case a == nil && b == nil:
		return nil
	case a == nil || b == nil:
		without := old.Name
		if b == nil {
			without = new.Name
		}
		return []string{fmt.Sprintf("%s has no idle baseline (bench --baseline 0): the gross energies are compared, idle power and all", without)}
	}
	if math.IsNaN(a.SE) || math.IsNaN(b.SE) || !bench.Differ(a.Watts, a.SE, b.Watts, b.SE) {
		return nil
	}
	return []string{fmt.Sprintf("the idle power differs beyond its errors: %s ± %s in %s, %s ± %s in %s: the Mac's background changed between the runs, and the net figures are less alike than their tests say",
		output.Watts(a.Watts), output.Watts(a.SE), old.Name, output.Watts(b.Watts), output.Watts(b.SE), new.Name)}
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// num is x for JSON; nil (null) for NaN or an infinity.
func num(x float64) *wire.Num {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	n := wire.Num(x)
	return &n
}

// Verdict is the error a failed comparison ends with: its status, and a
// line naming what failed it; nil when it did not fail.
func (rep *Report) Verdict() error {
	if !rep.Failed {
		return nil
	}
	var names []string
	for _, r := range rep.Rows {
		if r.Verdict == Regressed || (rep.FailOn == FailChanged && r.Verdict == Improved) {
			names = append(names, fmt.Sprintf("%s (%s %s)", r.Name, r.label, signedPercent(float64(*r.Change))))
		}
	}
	what := "regressed"
	if rep.FailOn == FailChanged {
		what = "changed"
	}
	return &cli.Error{Status: cli.StatusRegressed, Err: fmt.Errorf("%s %s beyond %s at p < %v: %s", output.Count(len(names), "figure"), what,
		percent(float64(rep.Threshold)), float64(rep.Alpha), strings.Join(names, ", "))}
}
