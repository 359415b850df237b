package compare

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/wire"
)

// WriteText writes the comparison for people as bench writes a bench: a
// block per figure (each side's mean ± σ and count, the ratio and its
// interval, the test, the verdict), then a summary with the verdicts
// first; the warnings go to errw, as bench's do. st styles what goes to
// out, errSt what goes to errw.
func WriteText(out, errw io.Writer, rep *Report, st, errSt *output.Styles) error {
	var b strings.Builder
	for i, r := range rep.Rows {
		writeBlock(&b, rep, i, r, st)
	}
	writeSummary(&b, rep, st)
	_, err := io.WriteString(out, b.String())
	var w strings.Builder
	for _, msg := range rep.Warnings {
		fmt.Fprintf(&w, "exopower: %s %s\n", errSt.Render(errSt.Warn, "warning:"), msg)
	}
	io.WriteString(errw, w.String())
	return err
}

// labelWidth is where a block's values begin, as in bench's blocks
// (hyperfine's): the label and its gap.
const labelWidth = 21

// writeBlock writes row i's block.
func writeBlock(b *strings.Builder, rep *Report, i int, r Row, st *output.Styles) {
	fmt.Fprintf(b, "%s %s (%s)\n", st.Render(st.Title, fmt.Sprintf("Comparison %d:", i+1)), r.Name, r.label)
	line := func(label, value, after string) {
		b.WriteString("  " + st.Render(st.Label, pad(label, labelWidth)) + st.Render(st.Value, value))
		if after != "" {
			b.WriteString("    " + after)
		}
		b.WriteString("\n")
	}
	side := func(label, name string, s *Stats) {
		if s == nil {
			line(label+":", "none", "")
			return
		}
		after := output.Count(s.N, rep.valueNoun())
		if name != r.Name {
			after += " (" + name + ")"
		}
		if s.Stddev == nil {
			line(label+" (abs ≡):", fmt.Sprintf("%8s%11s", figureText(float64(s.Mean), r.Unit), ""), after)
			return
		}
		line(label+" (mean ± σ):", fmt.Sprintf("%8s ± %8s", figureText(float64(s.Mean), r.Unit), figureText(float64(*s.Stddev), r.Unit)), after)
	}
	side("Old", r.OldName, r.Old)
	side("New", r.Name, r.New)
	if r.Ratio != nil {
		line("New / old:", ratioText(r), fmt.Sprintf("%s confidence (Fieller)", percent(1-float64(rep.Alpha))))
	}
	if value, after := costLine(r); value != "" {
		line("Cost of the change:", value, after)
	}
	if r.PValue != nil {
		line("Welch's t-test:", " p = "+pText(float64(*r.PValue)), fmt.Sprintf("t = %.2f, %s degrees of freedom", float64(*r.T), dofText(r.DegreesOfFreedom)))
	}
	fmt.Fprintf(b, "  %s %s\n", st.Render(verdictStyle(st, r.Verdict), pad(r.Verdict, labelWidth)), reasonText(rep, r))
	for _, n := range r.Notes {
		fmt.Fprintf(b, "  %s\n", n)
	}
	b.WriteString("\n")
}

func verdictStyle(st *output.Styles, verdict string) lipgloss.Style {
	switch verdict {
	case Regressed:
		return st.Warn
	case Improved:
		return st.Total
	}
	return st.Value
}

// reasonText says why a row has its verdict.
func reasonText(rep *Report, r Row) string {
	th, alpha := percent(float64(rep.Threshold)), strconv.FormatFloat(float64(rep.Alpha), 'g', -1, 64)
	switch {
	case r.Verdict == Untested:
		return "no test: see below"
	case r.Change == nil || r.PValue == nil:
		return ""
	}
	change, p := signedPercent(float64(*r.Change)), float64(*r.PValue)
	switch {
	case r.Verdict == Regressed || r.Verdict == Improved:
		return fmt.Sprintf("%s, beyond %s at p < %s", change, th, alpha)
	case p < float64(rep.Alpha):
		return fmt.Sprintf("%s: significant at p < %s but within %s", change, alpha, th)
	}
	return fmt.Sprintf("%s: not significant at p < %s", change, alpha)
}

// writeSummary writes the verdicts: regressed first, then improved,
// untested and unchanged, each row's change and its interval, then the
// benchmarks that one export lacks.
func writeSummary(b *strings.Builder, rep *Report, st *output.Styles) {
	fmt.Fprintf(b, "%s %s (Welch's t-test; a change counts at p < %s and beyond %s)\n", st.Render(st.Title, "Summary:"), countsText(rep),
		strconv.FormatFloat(float64(rep.Alpha), 'g', -1, 64), percent(float64(rep.Threshold)))
	width := 0
	for _, r := range rep.Rows {
		width = max(width, len([]rune(r.Name+r.label))+3)
	}
	width = min(width, 48)
	for _, i := range verdictOrder(rep.Rows) {
		r := rep.Rows[i]
		change := ""
		if r.Change != nil {
			change = fmt.Sprintf("%8s", signedPercent(float64(*r.Change)))
			if r.RatioLow != nil {
				change += fmt.Sprintf("  [%s … %s]", signedPercent(float64(*r.RatioLow)-1), signedPercent(float64(*r.RatioHigh)-1))
			}
		}
		fmt.Fprintf(b, "  %s %s %s\n", st.Render(verdictStyle(st, r.Verdict), pad(r.Verdict, 10)), pad(r.Name+" ("+r.label+")", width), strings.TrimRight(change, " "))
	}
	if len(rep.OnlyInOld) > 0 {
		fmt.Fprintf(b, "  only in %s, not compared: %s\n", rep.Old.File, strings.Join(rep.OnlyInOld, ", "))
	}
	if len(rep.OnlyInNew) > 0 {
		fmt.Fprintf(b, "  only in %s, not compared: %s\n", rep.New.File, strings.Join(rep.OnlyInNew, ", "))
	}
}

// verdictOrder is the rows' order in the summaries: the verdicts that
// call for action first, each in the rows' own order.
func verdictOrder(rows []Row) []int {
	rank := map[string]int{Regressed: 0, Improved: 1, Untested: 2, Unchanged: 3}
	order := make([]int, len(rows))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int { return rank[rows[i].Verdict] - rank[rows[j].Verdict] })
	return order
}

// countsText counts the verdicts: "1 regressed, 2 unchanged".
func countsText(rep *Report) string {
	var parts []string
	for _, c := range []struct {
		n    int
		name string
	}{{rep.Regressed, Regressed}, {rep.Improved, Improved}, {rep.Untested, Untested}, {rep.Unchanged, Unchanged}} {
		if c.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c.n, c.name))
		}
	}
	if len(parts) == 0 {
		return "nothing compared"
	}
	return strings.Join(parts, ", ")
}

// valueNoun is what a figure's values are: a bench's runs, an llm's
// requests.
func (rep *Report) valueNoun() string { return kindNoun(rep.Kind) }

// figureText writes a figure's value in joules: as bench writes an
// energy, or for a figure per unit with four figures, as bench writes
// its energy per unit (the figure's name says per what).
func figureText(x float64, unit string) string {
	if unit == "J" {
		return output.Joules(x)
	}
	return fmt.Sprintf("%.4g J", x)
}

// meanText is a sample's mean ± σ in its unit.
func meanText(s Sample, unit string) string {
	if math.IsNaN(s.SD) {
		return figureText(s.Mean, unit)
	}
	return figureText(s.Mean, unit) + " ± " + figureText(s.SD, unit)
}

// ratioText is the ratio and its interval: "1.100  [1.095 … 1.105]".
func ratioText(r Row) string {
	text := fmt.Sprintf("%6.3f", float64(*r.Ratio))
	if r.RatioLow == nil {
		return text + "  [unbounded]"
	}
	return fmt.Sprintf("%s  [%.3f … %.3f]", text, float64(*r.RatioLow), float64(*r.RatioHigh))
}

// percent writes a fraction as a percentage: "5 %", "2.5 %".
func percent(f float64) string {
	// Four figures: a threshold of 0.03 % (--threshold 0.03, read as a
	// percentage) must not read as 0 %.
	return strconv.FormatFloat(f*100, 'g', 4, 64) + " %"
}

// signedPercent writes a change as a signed percentage with a decimal:
// "+10.0 %", "-0.3 %".
func signedPercent(f float64) string {
	return fmt.Sprintf("%+.1f %%", f*100)
}

// pText writes a p-value: three significant figures, in e-notation
// below 0.001.
func pText(p float64) string {
	if p < 0.001 {
		return fmt.Sprintf("%.2g", p)
	}
	return fmt.Sprintf("%.3g", p)
}

func dofText(dof *wire.Num) string {
	if dof == nil {
		return "∞"
	}
	return fmt.Sprintf("%.1f", float64(*dof))
}

// pad pads s with spaces to width runes; a longer s is left as it is.
func pad(s string, width int) string {
	if n := len([]rune(s)); n < width {
		return s + strings.Repeat(" ", width-n)
	}
	return s
}
