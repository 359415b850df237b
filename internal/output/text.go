package output

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/lipgloss"

	"github.com/exopower/exopower/internal/cost"
	"github.com/exopower/exopower/internal/wire"
)

// WriteText writes the summary for people, styled with st.
func WriteText(w io.Writer, sum *wire.Summary, st *Styles) error {
	var b strings.Builder
	head := "exopower"
	switch {
	case len(sum.Command) > 0:
		head += ": " + ShellQuote(sum.Command)
	case sum.Title != "":
		head += " " + sum.Title
	}
	fmt.Fprintln(&b, st.Render(st.Title, head))
	row := func(label, text string) {
		fmt.Fprintf(&b, "  %s %s\n", st.Render(st.Label, fmt.Sprintf("%-9s", label)), text)
	}
	if sum.ExitCode != nil {
		status := fmt.Sprintf("%d", *sum.ExitCode)
		if sum.Signal != nil {
			status += " (" + *sum.Signal + ")"
		}
		row("exit", status)
	}
	row("duration", fmt.Sprintf("%s   %s, %s covered", Seconds(float64(sum.DurationSeconds)), Count(sum.Samples, "sample"), Percent(float64(sum.Coverage))))
	writeTable(&b, sum, st)
	writeNodes(&b, sum, st)
	first, name := sum.EnergyJoules.Total, "total"
	if s := sum.EnergyJoules.System; s != nil {
		first, name = *s, "system"
	}
	if sum.Wall != nil {
		first, name = sum.Wall.EnergyJoules, "wall"
	}
	if wh := float64(first) / 3600; wh >= 0.01 {
		row("", fmt.Sprintf("(%s: %.3g Wh)", name, wh))
	}
	writeAttribution(&b, sum, st)
	writeApp(&b, sum, st)
	if w := sum.Wall; w != nil {
		row("wall", wallText(w))
	}
	if e := sum.WallEstimated; e != nil {
		fmt.Fprintf(&b, "  %s %s\n", st.Render(st.Label, "wall (estimated)"), wallEstimatedText(e))
	}
	if c := sum.Cost; c != nil {
		row("cost", cost.CostText(c))
	}
	if c := sum.CO2e; c != nil {
		row("CO2e", cost.CO2eText(c, sum.Cost))
	}
	row("scope", scopeOf(sum.EnergyJoules.Has()))
	row("source", sourceText(sum.Source))
	for _, wn := range sum.Warnings {
		fmt.Fprintf(&b, "  %s %s\n", st.Render(st.Warn, "warning:"), strings.ReplaceAll(wn, "\n", "\n    "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeTable writes the energy, average and peak of each component. Where
// part of the span was not measured, the average is two: the energy over
// the whole span, and the power over the time measured, each labelled.
func writeTable(b *strings.Builder, sum *wire.Summary, st *Styles) {
	measured := sum.MeasuredAvgPowerWatts
	if sum.Coverage >= 1 {
		measured = nil
	}
	if measured == nil {
		fmt.Fprintf(b, "  %-9s %12s %12s %12s\n", "", "energy", "average", "peak")
	} else {
		fmt.Fprintf(b, "  %-9s %12s %12s %12s %12s\n", "", "energy", "avg elapsed", "avg measured", "peak")
	}
	line := func(name string, e, avg wire.Num, m *wire.Num, peak wire.Num, s lipgloss.Style) {
		cell := func(text string) string { return st.Render(s, fmt.Sprintf("%12s", text)) }
		row := "  " + st.Render(st.Label, fmt.Sprintf("%-9s", name)) + " " + cell(Joules(float64(e))) + " " + cell(Watts(float64(avg)))
		if measured != nil {
			row += " " + cell(Watts(float64(val(m))))
		}
		fmt.Fprintln(b, row+" "+cell(Watts(float64(peak))))
	}
	e, avg, peak := sum.EnergyJoules, sum.AvgPowerWatts, sum.PeakPowerWatts
	var m wire.Components
	if measured != nil {
		m = *measured
	}
	// The wall leads where a plug reads it: it is what was paid for; then
	// the whole system, what the Mac drew.
	// An estimate of the wall leads too, named as one: its row's label
	// is never the measured wall's.
	if w := sum.WallEstimated; w != nil && sum.Wall == nil {
		fmt.Fprintln(b, "  "+st.Render(st.Label, fmt.Sprintf("%-9s", "wall est."))+" "+st.Render(st.Value, fmt.Sprintf("%12s", Joules(float64(w.EnergyJoules))))+
			" "+st.Render(st.Value, fmt.Sprintf("%12s", Watts(float64(w.AvgPowerWatts)))))
	}
	if w := sum.Wall; w != nil {
		fmt.Fprintln(b, "  "+st.Render(st.Label, fmt.Sprintf("%-9s", "wall"))+" "+st.Render(st.Total, fmt.Sprintf("%12s", Joules(float64(w.EnergyJoules))))+
			" "+st.Render(st.Total, fmt.Sprintf("%12s", Watts(float64(w.AvgPowerWatts)))))
	}
	if e.System != nil {
		line("system", *e.System, val(avg.System), m.System, val(peak.System), st.Total)
	}
	line("total", e.Total, avg.Total, &m.Total, peak.Total, st.Total)
	line("CPU", e.CPU, avg.CPU, &m.CPU, peak.CPU, st.Value)
	line("GPU", e.GPU, avg.GPU, &m.GPU, peak.GPU, st.Value)
	line("ANE", e.ANE, avg.ANE, &m.ANE, peak.ANE, st.Value)
	if e.DRAM != nil {
		line("DRAM", *e.DRAM, val(avg.DRAM), m.DRAM, val(peak.DRAM), st.Value)
	}
	if measured != nil {
		covered := float64(sum.DurationSeconds) * float64(sum.Coverage)
		fmt.Fprintf(b, "  %s elapsed: the energy over all %s; measured: the power over the %s that windows covered (%s)\n",
			st.Render(st.Label, fmt.Sprintf("%-9s", "average")), Seconds(float64(sum.DurationSeconds)), Seconds(covered), Percent(float64(sum.Coverage)))
	}
}

// val is n's value, 0 for null.
func val(n *wire.Num) wire.Num {
	if n == nil {
		return 0
	}
	return *n
}

// writeNodes writes a row per node of a run over several Macs: its own
// energy, average, coverage and round trip, and the edges' bound.
func writeNodes(b *strings.Builder, sum *wire.Summary, st *Styles) {
	if len(sum.Nodes) == 0 {
		return
	}
	// Each node by its label, whole: two nodes may have one name, and
	// their labels differ by their addresses, at the end.
	names := make([]string, len(sum.Nodes))
	width := 20
	for i, n := range sum.Nodes {
		names[i] = cmp.Or(n.Label, n.Node)
		if n.Lost {
			names[i] += " (lost)"
		}
		width = max(width, utf8.RuneCountInString(names[i]))
	}
	// A column of each node's wall where any node's serve reads a plug.
	walls := slices.ContainsFunc(sum.Nodes, func(n wire.NodeSummary) bool { return n.Wall != nil })
	wallCell := func(n wire.NodeSummary) string {
		switch {
		case !walls:
			return ""
		case n.Wall == nil:
			return fmt.Sprintf(" %12s", "-")
		}
		return fmt.Sprintf(" %12s", Joules(float64(n.Wall.EnergyJoules)))
	}
	head := fmt.Sprintf("  %-*s %12s %12s %9s %10s", width, "node", "energy", "average", "covered", "round trip")
	if walls {
		head += fmt.Sprintf(" %12s", "wall")
	}
	fmt.Fprintln(b, head)
	for i, n := range sum.Nodes {
		fmt.Fprintf(b, "  %s %s %12s %9s %10s%s\n", st.Render(st.Label, fmt.Sprintf("%-*s", width, names[i])),
			st.Render(st.Value, fmt.Sprintf("%12s", Joules(float64(n.EnergyJoules.Total)))),
			Watts(float64(n.AvgPowerWatts.Total)), Percent(float64(n.Coverage)), fmt.Sprintf("%.1f ms", float64(n.RoundTripSeconds)*1000), wallCell(n))
	}
	if sum.UncertaintyJoules != nil {
		fmt.Fprintf(b, "  %-*s %12s  (the round trips' bound on the total)\n", width, "±", Joules(float64(*sum.UncertaintyJoules)))
	}
}

func sourceText(s wire.Source) string {
	text := s.Tool
	if s.HWModel != "" {
		text += " on " + s.HWModel
	}
	if s.OSBuild != "" {
		text += ", macOS build " + s.OSBuild
	}
	return text
}

// Seconds writes a duration in seconds: three decimals below 10 s, one
// from there.
func Seconds(s float64) string {
	if s < 10 {
		return fmt.Sprintf("%.3f s", s)
	}
	return fmt.Sprintf("%.1f s", s)
}

// Percent writes a fraction (1 is all) as a percentage, rounded down to
// a tenth, so that anything short of all never reads as 100%.
func Percent(f float64) string {
	if f >= 1 {
		return "100%"
	}
	return fmt.Sprintf("%.1f%%", math.Floor(f*1000)/10)
}

// Joules writes an energy in joules: three decimals below 10 J, two
// below 1000 J, one from there.
func Joules(j float64) string { return string(appendJoules(nil, j)) }

func appendJoules(b []byte, j float64) []byte {
	prec := 1
	switch {
	case j < 10:
		prec = 3
	case j < 1000:
		prec = 2
	}
	return append(strconv.AppendFloat(b, j, 'f', prec, 64), " J"...)
}

// Watts writes a power in watts: three decimals below 10 W, two from
// there.
func Watts(w float64) string { return string(appendWatts(nil, w)) }

func appendWatts(b []byte, w float64) []byte {
	prec := 2
	if w < 10 {
		prec = 3
	}
	return append(strconv.AppendFloat(b, w, 'f', prec, 64), " W"...)
}

// ShellQuote writes argv as a shell would need it typed: words of safe
// characters as they are, others in single quotes.
func ShellQuote(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r))
		}) < 0 {
			q[i] = a
			continue
		}
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// ShellSplit reads back the words of a command that ShellQuote wrote, or
// that a user typed in the same way: words apart at blanks, single quotes
// around what is taken as it is, a backslash before a character taken as
// it is.
func ShellSplit(line string) ([]string, error) {
	var words []string
	var word strings.Builder
	inWord, quoted, escaped := false, false, false
	for _, r := range line {
		switch {
		case escaped:
			word.WriteRune(r)
			escaped = false
		case quoted:
			if r == '\'' {
				quoted = false
			} else {
				word.WriteRune(r)
			}
		case r == ' ' || r == '\t':
			if inWord {
				words, inWord = append(words, word.String()), false
				word.Reset()
			}
			continue
		case r == '\'':
			quoted = true
		case r == '\\':
			escaped = true
		default:
			word.WriteRune(r)
		}
		inWord = true
	}
	if quoted || escaped {
		return nil, fmt.Errorf("%q ends inside a quote or after a backslash", line)
	}
	if inWord {
		words = append(words, word.String())
	}
	return words, nil
}

// Count writes n things, in the singular for one: "1 sample", "2 samples".
func Count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// wallText says how the wall's figure was had: from which plug, by its
// counter or its power readings, and how well.
func wallText(w *wire.Wall) string {
	how := "the power readings"
	switch w.Method {
	case "counter":
		how = "the energy counter"
	case "mixed":
		how = "the energy counters and power readings"
	}
	plug := w.Source.Kind
	if w.Source.Model != "" {
		plug = w.Source.Model + " (" + w.Source.Kind + ")"
	}
	text := fmt.Sprintf("± %s, from %s of %s at %s", Joules(float64(w.UncertaintyJoules)), how, plug, w.Source.Address)
	if r := w.Source.CounterResolutionJoules; r != nil {
		text += fmt.Sprintf(" (one count: %s)", Joules(float64(*r)))
	}
	if w.Coverage < 1 {
		text += fmt.Sprintf(", %s covered", Percent(float64(w.Coverage)))
	}
	return text + "; the Mac and whatever else is on the plug"
}

// wallEstimatedText says that the wall's figure is an estimate, of which
// calibration, and how far off it may be.
func wallEstimatedText(e *wire.WallEstimated) string {
	c := e.Calibration
	of := "system"
	if e.From == "soc" {
		of = "SoC"
	}
	text := fmt.Sprintf("± %s, not measured: from this Mac's calibration of %s, wall = %s + %.3f × %s (RMS %s, largest %s, over %d steps of %s to %s)",
		Joules(float64(e.UncertaintyJoules)), CalibrationDay(c.CalibratedAt), Watts(float64(c.InterceptWatts)), float64(c.Slope), of,
		Watts(float64(c.RMSWatts)), Watts(float64(c.MaxResidualWatts)), c.Steps, Watts(float64(c.MinWatts)), Watts(float64(c.MaxWatts)))
	if e.Extrapolated {
		text += "; the Mac's power was outside that range"
	}
	return text
}
