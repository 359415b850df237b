package compare

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/exopower/exopower/internal/output"
)

// WriteMarkdown writes the comparison for a pull request's comment: a
// heading that counts the verdicts, a table of them (regressed first),
// the benchmarks one side lacks and the warnings, and the details
// folded in a <details> element: each side's values, the test and the
// exports' Macs and baselines.
func WriteMarkdown(w io.Writer, rep *Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "### exopower compare: %s\n\n", countsText(rep))
	conf := percent(1 - float64(rep.Alpha))
	priced := slices.ContainsFunc(rep.Rows, func(r Row) bool { return r.Cost != nil || r.CO2e != nil })
	head, rule := fmt.Sprintf("| Verdict | Benchmark | Figure | Change | %s interval | p |", conf), "|:---|:---|:---|---:|---:|---:|"
	if priced {
		head, rule = head+" Cost of the change |", rule+"---:|"
	}
	b.WriteString(head + "\n" + rule + "\n")
	for _, i := range verdictOrder(rep.Rows) {
		r := rep.Rows[i]
		verdict := r.Verdict
		if verdict == Regressed || verdict == Improved {
			verdict = "**" + verdict + "**"
		}
		change, interval, p := "", "", ""
		if r.Change != nil {
			change = signedPercent(float64(*r.Change))
		}
		if r.RatioLow != nil {
			interval = signedPercent(float64(*r.RatioLow)-1) + " … " + signedPercent(float64(*r.RatioHigh)-1)
		}
		if r.PValue != nil {
			p = pText(float64(*r.PValue))
		}
		cells := []string{verdict, code(r.Name), r.label, change, interval, p}
		if priced {
			value, _ := costLine(r)
			cells = append(cells, value)
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	b.WriteString("\n")
	for _, only := range []struct {
		file  string
		names []string
	}{{rep.Old.File, rep.OnlyInOld}, {rep.New.File, rep.OnlyInNew}} {
		if len(only.names) > 0 {
			fmt.Fprintf(&b, "Only in %s, not compared: %s.\n\n", code(only.file), codes(only.names))
		}
	}
	for _, msg := range rep.Warnings {
		fmt.Fprintf(&b, "- **Warning:** %s\n", escape(msg))
	}
	if len(rep.Warnings) > 0 {
		b.WriteString("\n")
	}
	writeDetails(&b, rep)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeDetails writes the folded part: every row's values and test, the
// notes, the two exports, and how the verdicts are made.
func writeDetails(b *strings.Builder, rep *Report) {
	alpha := strconv.FormatFloat(float64(rep.Alpha), 'g', -1, 64)
	fmt.Fprintf(b, "<details>\n<summary>Details: Welch's t-test; a change counts at p &lt; %s and beyond %s</summary>\n\n", alpha, percent(float64(rep.Threshold)))
	noun := rep.valueNoun() + "s"
	fmt.Fprintf(b, "| Benchmark | Figure | Old (mean ± σ) | %s | New (mean ± σ) | %s | New / old | t | df | p |\n", noun, noun)
	b.WriteString("|:---|:---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	var notes []string
	for _, r := range rep.Rows {
		name := code(r.Name)
		if r.OldName != r.Name {
			name += " (old: " + code(r.OldName) + ")"
		}
		ratio, t, dof, p := "", "", "", ""
		if r.Ratio != nil {
			ratio = strings.TrimSpace(ratioText(r))
		}
		if r.PValue != nil {
			t, dof, p = fmt.Sprintf("%.2f", float64(*r.T)), dofText(r.DegreesOfFreedom), pText(float64(*r.PValue))
		}
		o, on := statsCells(r.Old, r.Unit)
		n, nn := statsCells(r.New, r.Unit)
		b.WriteString("| " + strings.Join([]string{name, r.label, o, on, n, nn, ratio, t, dof, p}, " | ") + " |\n")
		for _, note := range r.Notes {
			notes = append(notes, fmt.Sprintf("- %s, %s: %s", code(r.Name), r.label, escape(note)))
		}
	}
	b.WriteString("\n")
	if len(notes) > 0 {
		b.WriteString(strings.Join(notes, "\n") + "\n\n")
	}
	writeSides(b, rep)
	fmt.Fprintf(b, "Welch's t-test (unequal variances) on each %s's value, the idle baseline's standard error added to each side's variance where the figure is net of it; "+
		"the interval is the ratio's by Fieller's theorem at the test's degrees of freedom, and leaves out 1 exactly when p < %s. "+
		"A change counts when p < %s and it is beyond %s either way.\n\n</details>\n", rep.valueNoun(), alpha, alpha, percent(float64(rep.Threshold)))
}

// writeSides writes what each export was: its file, Mac, source and
// idle power.
func writeSides(b *strings.Builder, rep *Report) {
	b.WriteString("| | old | new |\n|:---|:---|:---|\n")
	row := func(name string, f func(Side) string) {
		fmt.Fprintf(b, "| %s | %s | %s |\n", name, f(rep.Old), f(rep.New))
	}
	row("file", func(s Side) string { return code(s.File) })
	row("Mac", func(s Side) string { return orNone(s.Source.HWModel) })
	row("source", func(s Side) string {
		text := orNone(s.Source.Tool)
		if s.Source.OSBuild != "" {
			text += ", macOS " + s.Source.OSBuild
		}
		return text + fmt.Sprintf(", every %s", output.Seconds(float64(s.IntervalSeconds)))
	})
	row("idle power", func(s Side) string {
		switch {
		case s.IdlePowerWatts == nil:
			return "no baseline"
		case s.IdleStandardErrorWatts == nil:
			return output.Watts(float64(*s.IdlePowerWatts))
		}
		return output.Watts(float64(*s.IdlePowerWatts)) + " ± " + output.Watts(float64(*s.IdleStandardErrorWatts))
	})
	row("complete", func(s Side) string {
		if s.Complete {
			return "yes"
		}
		return "no: cut short"
	})
	b.WriteString("\n")
}

// statsCells are a side's mean ± σ and count.
func statsCells(s *Stats, unit string) (string, string) {
	if s == nil {
		return "none", ""
	}
	text := figureText(float64(s.Mean), unit)
	if s.Stddev != nil {
		text += " ± " + figureText(float64(*s.Stddev), unit)
	}
	return text, strconv.Itoa(s.N)
}

// code is s as Markdown code in a table's cell: between backticks, with
// more of them around where s holds one, and its pipes escaped.
func code(s string) string {
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	s = strings.ReplaceAll(s, "|", `\|`)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

func codes(names []string) string {
	c := make([]string, len(names))
	for i, n := range names {
		c[i] = code(n)
	}
	return strings.Join(c, ", ")
}

// escape keeps a message's text from being read as Markdown or HTML.
func escape(s string) string {
	r := strings.NewReplacer("<", "&lt;", ">", "&gt;", "|", `\|`, "*", `\*`, "_", `\_`, "`", "\\`", "[", `\[`)
	return r.Replace(s)
}
