package bench

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/wall"
	"github.com/exopower/exopower/internal/wire"
)

// Text writes a bench for people as hyperfine writes its own: a block
// per command as soon as its runs are done ("Benchmark 1: NAME", its
// energy's mean ± σ and range, the runs, its power and time beneath), and
// at the end what needs every run and the closing baseline: the idle
// power, each command's net energy, and the summary of how the commands
// compare. The blocks show the gross energy: the net energy is known only
// once the closing baseline is measured. Warnings go to Err, each once.
type Text struct {
	Out, Err io.Writer
	// Styles style what is written to Out, ErrStyles what is written to
	// Err.
	Styles, ErrStyles *output.Styles
	// TimeUnit is the unit of the blocks' times, as Report.TimeUnit:
	// written before the report is done, they cannot read it there.
	TimeUnit string

	written map[int]bool    // the commands whose block is written
	said    map[string]bool // the warnings written, by command and text
	err     error           // the first failed write to Out
}

// NewText writes to out and errw, each styled with its own styles.
func NewText(out, errw io.Writer, st, errSt *output.Styles) *Text {
	return &Text{Out: out, Err: errw, Styles: st, ErrStyles: errSt}
}

// WriteText writes the whole report for people to w, styled with st:
// every command's block, the closing part, and the warnings.
func WriteText(w io.Writer, rep *Report, st *output.Styles) error {
	t := NewText(w, w, st, st)
	t.TimeUnit = rep.TimeUnit
	return t.Summary(rep)
}

// Benchmark writes the block of r, the command at index i, whose runs
// are done: Result.Preview's statistics, before the closing baseline. A
// failed write is returned by Summary.
func (t *Text) Benchmark(i int, r Result) {
	if t.written == nil {
		t.written, t.said = map[int]bool{}, map[string]bool{}
	}
	t.written[i] = true
	t.write(t.block(i, r))
	t.warn(r.Label(), r.Warnings)
	t.write("\n")
}

// Summary writes what is left once the bench is done: the block of any
// command that Benchmark was not given, the idle baseline, the net
// energies, the comparison, and the warnings not yet written. It returns
// the first write to Out that failed, this one's or a block's.
func (t *Text) Summary(rep *Report) error {
	if t.written == nil {
		t.written, t.said = map[int]bool{}, map[string]bool{}
	}
	if t.TimeUnit == "" {
		t.TimeUnit = rep.TimeUnit
	}
	for i, r := range rep.Results {
		if !t.written[i] {
			t.Benchmark(i, r)
		}
	}
	var b strings.Builder
	st := t.Styles
	if w := rep.Wall; w != nil {
		fmt.Fprintf(&b, "%s %s\n\n", st.Render(st.Title, "At the wall:"), wallSourceText(w.Source))
	}
	if bl := rep.Baseline; bl != nil {
		fmt.Fprintf(&b, "%s %s\n", st.Render(st.Title, "Idle baseline:"), idleText(float64(bl.PowerWatts), bl.StandardErrorWatts))
		fmt.Fprintf(&b, "  %s\n", spansText(bl))
		if sys := bl.SystemPowerWatts; sys != nil {
			fmt.Fprintf(&b, "  the whole Mac idle: %s (what net system is net of)\n", output.Watts(float64(*sys)))
		}
		if w := bl.Wall; w != nil {
			fmt.Fprintf(&b, "  at the wall: %s ± %s by the plug's readings%s over %s (what net at the wall is net of)\n", output.Watts(float64(w.PowerWatts)),
				output.Watts(float64(w.UncertaintyWatts)), seText(w.StandardErrorWatts), output.Seconds(float64(w.DurationSeconds)))
		}
		if w := bl.WallEstimatedPowerWatts; w != nil {
			fmt.Fprintf(&b, "  at the wall (estimated): %s from this Mac's calibration, not measured (what net at the wall (estimated) is net of)\n", output.Watts(float64(*w)))
		}
		t.writeNet(&b, rep)
		b.WriteString("\n")
	}
	t.writeComparison(&b, rep)
	t.write(b.String())
	for _, r := range rep.Results {
		t.warn(r.Label(), r.Warnings)
	}
	t.warn("", rep.Warnings)
	if r := rep.Reference; r != nil && len(rep.Results) > 1 && rep.Results[*r].EnergyJoules != nil && !(rep.Results[*r].EnergyJoules.Mean > 0) {
		// As hyperfine says of times of zero: a ratio to nothing is none.
		t.warn("", []string{fmt.Sprintf("%s used 0 J on average, less than the source counts: there is no ratio to it; "+
			"more work per run would give one", rep.Results[*r].Label())})
	}
	if !rep.Complete {
		t.warn("", []string{"the bench was cut short: these are the runs made by then"})
	}
	return t.err
}

func (t *Text) write(s string) {
	if _, err := io.WriteString(t.Out, s); err != nil && t.err == nil {
		t.err = err
	}
}

// warn writes each warning of command c (the report's own for "") not
// written yet.
func (t *Text) warn(c string, warnings []string) {
	var b strings.Builder
	for _, w := range warnings {
		if t.said[c+"\x00"+w] {
			continue
		}
		t.said[c+"\x00"+w] = true
		if c != "" {
			w = c + ": " + w
		}
		fmt.Fprintf(&b, "exopower: %s %s\n", t.ErrStyles.Render(t.ErrStyles.Warn, "warning:"), w)
	}
	io.WriteString(t.Err, b.String())
}

// spansText says what each idle span measured and for how long: "before
// 4.502 W over 0.500 s, after 4.501 W ± 0.001 W over 1.000 s".
func spansText(bl *Baseline) string {
	var parts []string
	for _, s := range []struct {
		name string
		idle *Idle
	}{{"before", bl.Before}, {"between runs", bl.Between}, {"after", bl.After}} {
		if s.idle != nil {
			parts = append(parts, fmt.Sprintf("%s %s over %s", s.name, idleText(float64(s.idle.PowerWatts), s.idle.StandardErrorWatts),
				output.Seconds(float64(s.idle.DurationSeconds))))
		}
	}
	return strings.Join(parts, ", ")
}

func idleText(p float64, se *wire.Num) string {
	if se == nil {
		return output.Watts(p)
	}
	return output.Watts(p) + " ± " + output.Watts(float64(*se))
}

// block is hyperfine's block of a benchmark, in joules: the energy's
// mean ± σ and its range with the count of runs, then the power and the
// time (the wall-clock time's, with its user and system CPU time). One
// run has no σ and no range: hyperfine's "abs ≡". The blank line that
// ends it is left to Benchmark, after the warnings.
func (t *Text) block(i int, r Result) string {
	st := t.Styles
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", st.Render(st.Title, fmt.Sprintf("Benchmark %d:", i+1)), r.Label())
	if len(r.Runs) == 0 || r.EnergyJoules == nil {
		b.WriteString("  no run was measured\n")
		return b.String()
	}
	one := r.EnergyJoules.Stddev == nil
	var lines []blockLine
	row := func(name string, s *Spread, unit func(float64) string, after string) {
		if s == nil {
			return
		}
		if one {
			lines = append(lines, blockLine{name + " (abs ≡):", unit(float64(s.Mean)), "", "", after})
			return
		}
		lines = append(lines, blockLine{name + " (mean ± σ):", unit(float64(s.Mean)), "±", unit(val(s.Stddev)), after})
	}
	ranged := func(s *Spread, unit func(float64) string, after string) {
		if s != nil && !one {
			lines = append(lines, blockLine{"Range (min … max):", unit(float64(s.Min)), "…", unit(float64(s.Max)), after})
		}
	}
	runs := output.Count(len(r.Runs), "run")
	lead := wallLead(r)
	if lead.energy != nil {
		// The wall leads where a plug reads it: it is what was paid
		// for, as exopower run's summary leads with it; an estimate of
		// it leads too, named as one.
		row(lead.name, lead.energy, output.Joules, lead.after)
		ranged(lead.energy, output.Joules, "")
	}
	if r.SystemEnergyJoules != nil {
		// The whole Mac's leads where it is known: it is what the Mac drew.
		row("System energy", r.SystemEnergyJoules, output.Joules, "")
		ranged(r.SystemEnergyJoules, output.Joules, "")
	}
	row("Energy", r.EnergyJoules, output.Joules, "")
	if one {
		lines[len(lines)-1].after = runs
	}
	ranged(r.EnergyJoules, output.Joules, runs)
	row("Power", r.AvgPowerWatts, output.Watts, "")
	row("Own energy", r.CommandEnergyJoules, output.Joules, "[its processes': CPU measured by the kernel, unseen CPU and GPU estimated]")
	if r.Mean != nil {
		u := t.unit(float64(*r.Mean))
		row("Time", &Spread{Mean: *r.Mean, Stddev: r.Stddev}, u.text, fmt.Sprintf("[User: %s, System: %s]", u.text(val(r.User)), u.text(val(r.System))))
	}
	if r.EnergyPerUnitJoules != nil {
		// Four figures: an energy per token is often a few millijoules.
		name := cmp.Or(r.unit, "unit")
		row("Energy per "+name, r.EnergyPerUnitJoules, func(x float64) string { return fmt.Sprintf("%.4g J", x) }, "")
		row(strings.ToUpper(name[:1])+name[1:]+"s per joule", r.UnitsPerJoule, func(x float64) string { return fmt.Sprintf("%.4g", x) }, "")
		row(lead.perUnit+name, lead.perUnitEnergy, func(x float64) string { return fmt.Sprintf("%.4g J", x) }, "")
	}
	t.writeLines(&b, append(lines, costLines(r)...))
	return b.String()
}

// writeLines writes a block's lines, their values lined up after the
// longest label or where hyperfine's begin.
func (t *Text) writeLines(b *strings.Builder, lines []blockLine) {
	st := t.Styles
	width := hyperfineLabelWidth
	for _, l := range lines {
		width = max(width, len([]rune(l.label))+1)
	}
	for _, l := range lines {
		v := l.values()
		if l.after == "" {
			v = strings.TrimRight(v, " ")
		}
		b.WriteString("  " + st.Render(st.Label, padRunes(l.label, width)) + st.Render(st.Value, v))
		if l.after != "" {
			b.WriteString("    " + l.after)
		}
		b.WriteString("\n")
	}
}

// hyperfineLabelWidth is where hyperfine's values begin, after the
// label and its gap: "Time (mean ± σ):" and five spaces, "Range (min …
// max):" and three. A longer label pushes the values of the whole block
// to its right.
const hyperfineLabelWidth = 21

// blockLine is a line of a block: its label, a value, and where there is
// a spread the sign and the other value; after follows them.
type blockLine struct{ label, a, sign, b, after string }

// values are the line's values as hyperfine writes them: each right
// aligned in 8 columns, wider ones as they are, " ± " or " … " between;
// a value alone leaves the room of the other, so that what follows
// lines up.
func (l blockLine) values() string {
	if l.sign == "" {
		return fmt.Sprintf("%8s%11s", l.a, "")
	}
	return fmt.Sprintf("%8s %s %8s", l.a, l.sign, l.b)
}

// unit is the unit of the blocks' times: TimeUnit's, or as hyperfine
// chooses it for each command, by its mean.
func (t *Text) unit(mean float64) durationUnit {
	if t.TimeUnit != "" {
		return timeUnit(&Report{TimeUnit: t.TimeUnit})
	}
	return unitOf(mean)
}

func (u durationUnit) text(s float64) string {
	n := wire.Num(s)
	return u.format(&n) + " " + u.short
}

// writeNet writes each command's net energy: its energy less the idle
// power over each run, with the baseline's own uncertainty beside the
// runs' spread.
func (t *Text) writeNet(b *strings.Builder, rep *Report) {
	st := t.Styles
	if !slices.ContainsFunc(rep.Results, func(r Result) bool { return r.NetEnergyJoules != nil }) {
		return
	}
	fmt.Fprintf(b, "%s\n", st.Render(st.Title, "Net energy (less the idle power over each run):"))
	width := 0
	for _, r := range rep.Results {
		width = max(width, len([]rune(r.Label())))
	}
	width = min(width, 40)
	for _, r := range rep.Results {
		n := r.NetEnergyJoules
		if n == nil {
			continue
		}
		line := joulesMeanSD(n)
		if u := r.NetEnergyUncertaintyJoules; u != nil {
			line += fmt.Sprintf("   (± %s from the baseline)", output.Joules(float64(*u)))
		}
		if w := r.Wall; w != nil && w.NetEnergyJoules != nil {
			// The wall leads, as in the blocks.
			line = fmt.Sprintf("at the wall %s   (± %s from the plug and the baseline);  SoC %s", joulesMeanSD(w.NetEnergyJoules),
				output.Joules(float64(w.UncertaintyJoules)+val(w.NetEnergyUncertaintyJoules)), line)
		}
		if w := r.WallEstimated; r.Wall == nil && w != nil && w.NetEnergyJoules != nil {
			line = fmt.Sprintf("at the wall (estimated) %s;  SoC %s", joulesMeanSD(w.NetEnergyJoules), line)
		}
		if s := r.NetSystemEnergyJoules; s != nil {
			line += ";  net system " + joulesMeanSD(s)
		}
		fmt.Fprintf(b, "  %s  %s\n", st.Render(st.Label, padRunes(r.Label(), width)), st.Render(st.Value, line))
	}
}

func joulesMeanSD(s *Spread) string {
	if s.Stddev == nil {
		return output.Joules(float64(s.Mean))
	}
	return output.Joules(float64(s.Mean)) + " ± " + output.Joules(float64(*s.Stddev))
}

// padRunes pads s with spaces to width runes; it leaves a longer s as it
// is.
func padRunes(s string, width int) string {
	if n := len([]rune(s)); n < width {
		return s + strings.Repeat(" ", width-n)
	}
	return s
}

// writeComparison writes hyperfine's summary, of energy: the reference
// (the least energy, or --reference) first, then how it compares with
// each other command, its ratio never below 1 and worded more or less.
// With --sort command it writes hyperfine's table instead, each
// command's energy relative to the reference's in the commands' order.
func (t *Text) writeComparison(b *strings.Builder, rep *Report) {
	if rep.Reference == nil {
		return
	}
	if rep.Sort == SortCommand {
		t.writeRelativeTable(b, rep)
		return
	}
	st := t.Styles
	ref := rep.Results[*rep.Reference]
	var lines []string
	for _, i := range rep.SummaryOrder() {
		if i == *rep.Reference {
			continue
		}
		if rel, ok := Relate(ref, rep.Results[i]); ok {
			lines = append(lines, fmt.Sprintf("%s%s %s", rel.indent(), st.Render(st.Total, rel.Than()), rep.Results[i].Label()))
		}
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(b, "%s\n  %s ran\n%s\n", st.Render(st.Title, "Summary"), st.Render(st.Value, ref.Label()), strings.Join(lines, "\n"))
}

// indent is what goes before a line of the summary, so that its ratio
// ends where hyperfine's does, right aligned in 8 columns (its "{:8.2}");
// "as much energy" takes hyperfine's "As fast"'s four spaces.
func (rel Relation) indent() string {
	if !rel.More && !rel.Less {
		return "    "
	}
	return strings.Repeat(" ", max(0, 8-len(fmt.Sprintf("%.2f", rel.Ratio))))
}

// writeRelativeTable writes hyperfine's "Relative speed comparison" of
// --sort command, of energy: each command's mean energy over the
// reference's, ± its propagated error, in the commands' order, the
// reference's 1.00 alone. A command that used less than a --reference
// reads below 1, where hyperfine would turn the ratio around.
func (t *Text) writeRelativeTable(b *strings.Builder, rep *Report) {
	st := t.Styles
	var lines []string
	for _, i := range rep.SummaryOrder() {
		r := rep.Results[i]
		if r.RelativeEnergy == nil {
			continue
		}
		sd := strings.Repeat(" ", 8)
		if s := r.RelativeEnergyStddev; s != nil && i != *rep.Reference {
			sd = " ± " + fmt.Sprintf("%5.2f", float64(*s))
		}
		lines = append(lines, fmt.Sprintf("  %s%s  %s", st.Render(st.Total, fmt.Sprintf("%10.2f", float64(*r.RelativeEnergy))), sd, r.Label()))
	}
	if len(lines) < 2 {
		return
	}
	fmt.Fprintf(b, "%s\n%s\n", st.Render(st.Title, "Relative energy comparison"), strings.Join(lines, "\n"))
}

// wallAfter says how a command's wall energy was had, after its line:
// the plug's uncertainty, which more runs do not shrink, and the method.
func wallAfter(w *ResultWall) string {
	how := "energy counter and power readings"
	switch w.Method {
	case wall.MethodCounter:
		how = "energy counter"
	case wall.MethodPower:
		how = "power readings"
	}
	text := fmt.Sprintf("[± %s by the plug's %s", output.Joules(float64(w.UncertaintyJoules)), how)
	if !w.Resolved {
		text += "; not resolved: see the warnings"
	}
	return text + "]"
}

// seText is " ± SE from the spread" of the idle pieces at the wall, ""
// without one.
func seText(se *wire.Num) string {
	if se == nil {
		return ""
	}
	return fmt.Sprintf(" ± %s from the spread", output.Watts(float64(*se)))
}

// wallSourceText names the plug of --wall and how it was read.
func wallSourceText(s wire.WallSource) string {
	plug := s.Kind
	if s.Model != "" {
		plug = s.Model + " (" + s.Kind + ")"
	}
	text := fmt.Sprintf("%s at %s, read every %s and at each run's edges", plug, s.Address, output.Seconds(float64(s.IntervalSeconds)))
	if r := s.CounterResolutionJoules; r != nil {
		text += fmt.Sprintf(", its counter in counts of %s", output.Joules(float64(*r)))
	}
	return text + "; the Mac and whatever else is on the plug"
}

// estimatedAfter says that a command's wall energy is an estimate, after
// its line: of which calibration, and its error, which more runs do not
// shrink.
func estimatedAfter(w *ResultWallEstimated) string {
	c := w.Calibration
	text := fmt.Sprintf("[not measured: from this Mac's calibration of %s, ± %s by its RMS of %s", output.CalibrationDay(c.CalibratedAt),
		output.Joules(float64(w.UncertaintyJoules)), output.Watts(float64(c.RMSWatts)))
	if w.Extrapolated {
		text += "; extrapolated: the Mac's power was outside the calibration's range"
	}
	return text + "]"
}

// leadingWall is the wall's rows that lead a command's block.
type leadingWall struct {
	name, perUnit, after  string
	energy, perUnitEnergy *Spread
}

// wallLead is the wall that leads a command's block: the plug's energy
// where it measured the runs, else the estimate's from this Mac's
// calibration, named as one; no energy without either, no energy per
// unit without units.
func wallLead(r Result) leadingWall {
	switch {
	case r.Wall != nil:
		return leadingWall{"Wall energy", "Wall energy per ", wallAfter(r.Wall), r.Wall.EnergyJoules, r.Wall.EnergyPerUnitJoules}
	case r.WallEstimated != nil:
		w := r.WallEstimated
		return leadingWall{"Wall energy (estimated)", "Wall (estimated) per ", estimatedAfter(w), w.EnergyJoules, w.EnergyPerUnitJoules}
	}
	return leadingWall{}
}
