package llm

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/wall"
	"github.com/exopower/exopower/internal/wire"
)

// Text writes a benchmark for people as exopower bench writes one: a
// block per setting as soon as its requests are done (gross figures),
// and at the end the idle baseline, each setting's net figures, and the
// warnings, each once.
type Text struct {
	Out, Err          io.Writer
	Styles, ErrStyles *output.Styles
	written           map[int]bool
	said              map[string]bool
	err               error
}

// NewText writes to out and errw, each styled with its own styles.
func NewText(out, errw io.Writer, st, errSt *output.Styles) *Text {
	return &Text{Out: out, Err: errw, Styles: st, ErrStyles: errSt, written: map[int]bool{}, said: map[string]bool{}}
}

// Setting writes the block of the setting at index i, done.
func (t *Text) Setting(i int, r Result) {
	t.written[i] = true
	t.write(t.block(i, r, false))
	t.warn(r.Warnings)
	t.write("\n")
}

// Summary writes what is left once the benchmark is done, and returns
// the first write to Out that failed.
func (t *Text) Summary(rep *Report) error {
	for i, r := range rep.Results {
		if !t.written[i] {
			t.write(t.block(i, r, false) + "\n")
		}
	}
	if b := rep.Baseline; b != nil {
		st := t.Styles
		line := fmt.Sprintf("%s %s", st.Render(st.Label, "Idle power (baseline):"), st.Render(st.Value, watts(float64(b.PowerWatts), b.StandardErrorWatts)))
		if b.SystemPowerWatts != nil {
			line += fmt.Sprintf(", the whole Mac's %s", watts(float64(*b.SystemPowerWatts), b.SystemStandardErrorWatts))
		}
		if w := b.Wall; w != nil {
			line += fmt.Sprintf(", at the wall %s (± %s by the plug's readings)", watts(float64(w.PowerWatts), w.StandardErrorWatts), output.Watts(float64(w.UncertaintyWatts)))
		}
		if w := b.WallEstimatedPowerWatts; w != nil {
			line += fmt.Sprintf(", at the wall (estimated, not measured) %s", output.Watts(float64(*w)))
		}
		t.write(line + fmt.Sprintf(" over %s\n\n", output.Seconds(float64(b.DurationSeconds))))
		for i, r := range rep.Results {
			t.write(t.block(i, r, true) + "\n")
		}
	}
	for _, r := range rep.Results {
		t.warn(r.Warnings)
	}
	t.warn(rep.Warnings)
	return t.err
}

// WriteText writes the whole report to w.
func WriteText(w io.Writer, rep *Report, st *output.Styles) error {
	return NewText(w, w, st, st).Summary(rep)
}

func watts(p float64, se *wire.Num) string {
	if se == nil {
		return output.Watts(p)
	}
	return output.Watts(p) + " ± " + output.Watts(float64(*se))
}

func (t *Text) write(s string) {
	if t.err == nil {
		_, t.err = io.WriteString(t.Out, s)
	}
}

func (t *Text) warn(ws []string) {
	for _, w := range ws {
		if t.said[w] {
			continue
		}
		t.said[w] = true
		fmt.Fprintf(t.Err, "%s %s\n", t.ErrStyles.Render(t.ErrStyles.Warn, "exopower: warning:"), w)
	}
}

// title names a setting.
func title(r Result) string {
	return fmt.Sprintf("%s, %d in flight", r.Model, r.Concurrency)
}

type row struct{ label, value, after string }

// block is a setting's figures: gross, or with net the figures net of
// the idle baseline.
func (t *Text) block(i int, r Result, net bool) string {
	st := t.Styles
	var b strings.Builder
	head := "Benchmark"
	if net {
		head = "Net of idle"
	}
	fmt.Fprintf(&b, "%s %s\n", st.Render(st.Title, fmt.Sprintf("%s %d:", head, i+1)), title(r))
	f := r.Figures
	if f == nil || f.Requests == 0 {
		fmt.Fprintf(&b, "  no request ended as it should (%d sent)\n", len(r.Requests))
		return b.String()
	}
	var rows []row
	if w, ok := wallRow(r, net); ok {
		// The wall leads where a plug reads it: it is what was paid for.
		rows = append(rows, w)
	}
	if w, ok := estimatedRow(r, net); ok {
		// An estimate of it leads too, named as one.
		rows = append(rows, w)
	}
	if f.System != nil {
		rows = append(rows, scopeRows("System ", f.System, net)...)
	}
	rows = append(rows, scopeRows("", f.SoC, net)...)
	if !net {
		rows = append(rows, spreadRow("Time to first token", f.TimeToFirstTokenSeconds, output.Seconds, ""),
			spreadRow("Output tokens/s", f.OutputTokensPerSecond, tokens, ""),
			spreadRow("Prompt tokens/s", f.PromptTokensPerSecond, tokens, ""))
	}
	if run := r.Run; run != nil && run.Summary != nil && run.JoulesPerOutputToken != nil {
		rows = append(rows, t.runRow(r, net))
	}
	if !net {
		// Gross, as the meter at the wall counts it: in the block of
		// the gross figures only.
		rows = append(rows, costRows(r)...)
	}
	writeRows(&b, st, rows)
	return b.String()
}

// runRow is the whole stretch's exact figure.
func (t *Text) runRow(r Result, net bool) row {
	run := r.Run
	e, per := float64(run.Summary.EnergyJoules.Total), run.JoulesPerOutputToken
	what := "energy"
	if net && run.NetEnergyJoules != nil {
		e, per, what = float64(*run.NetEnergyJoules), run.NetJoulesPerOutputToken, "net energy"
	}
	exact := "exact"
	if !run.Exact {
		exact = "not exact: see the warnings"
	}
	return row{"Whole run:", fmt.Sprintf("%s per output token", perToken(val(per))),
		fmt.Sprintf("(%s %s, %s, %d output tokens in %s; %s)", what, output.Joules(e), output.Count(len(r.Requests), "request"),
			run.CompletionTokens, output.Seconds(float64(run.Summary.DurationSeconds)), exact)}
}

func scopeRows(prefix string, s *Scope, net bool) []row {
	if s == nil {
		return nil
	}
	name := func(n string) string {
		if prefix == "" {
			return n
		}
		return prefix + strings.ToLower(n[:1]) + n[1:]
	}
	perTok := func(label string, sp *Spread, u *wire.Num) row {
		if sp == nil {
			return row{}
		}
		unit := perTokenIn(float64(sp.Mean))
		return spreadRow(name(label), sp, unit, pm(u, unit))
	}
	if net {
		return []row{
			perTok("Energy per output token", s.NetJoulesPerOutputToken, s.NetJoulesPerOutputTokenUncertainty),
			perTok("Energy per prompt token", s.NetJoulesPerPromptToken, s.NetJoulesPerPromptTokenUncertainty),
			spreadRow(name("Energy per request"), s.NetJoulesPerRequest, output.Joules, pm(s.NetJoulesPerRequestUncertainty, output.Joules)),
		}
	}
	return []row{
		perTok("Energy per output token", s.JoulesPerOutputToken, nil),
		perTok("Energy per prompt token", s.JoulesPerPromptToken, nil),
		spreadRow(name("Energy per request"), s.JoulesPerRequest, output.Joules, ""),
		spreadRow(name("Power"), s.AvgPowerWatts, output.Watts, ""),
	}
}

// pm says the baseline's part of a net figure's uncertainty.
func pm(u *wire.Num, unit func(float64) string) string {
	if u == nil {
		return ""
	}
	return "± " + unit(float64(*u)) + " from the idle power's error"
}

func spreadRow(label string, s *Spread, unit func(float64) string, after string) row {
	if s == nil {
		return row{}
	}
	if s.Stddev == nil {
		return row{label + " (abs ≡):", fmt.Sprintf("%10s", unit(float64(s.Mean))), after}
	}
	v := fmt.Sprintf("%10s ± %10s  [median %s, p90 %s]", unit(float64(s.Mean)), unit(float64(*s.Stddev)), unit(float64(s.Median)), unit(float64(s.P90)))
	return row{label + " (mean ± σ):", v, after}
}

func writeRows(b *strings.Builder, st *output.Styles, rows []row) {
	width := 0
	for _, r := range rows {
		width = max(width, len([]rune(r.label)))
	}
	for _, r := range rows {
		if r.label == "" {
			continue
		}
		pad := strings.Repeat(" ", width-len([]rune(r.label)))
		line := fmt.Sprintf("  %s%s %s", st.Render(st.Label, r.label), pad, st.Render(st.Value, r.value))
		if r.after != "" {
			line += "    " + r.after
		}
		b.WriteString(line + "\n")
	}
}

// perToken writes an energy per token: often a few millijoules, so in
// mJ below a joule, to four figures.
func perToken(j float64) string { return perTokenIn(j)(j) }

// perTokenIn is the writer of energies per token in the unit that suits
// mean: a row's figures, its σ among them, in one unit.
func perTokenIn(mean float64) func(float64) string {
	if math.Abs(mean) < 1 {
		return func(j float64) string {
			if math.IsNaN(j) {
				return "-"
			}
			return fmt.Sprintf("%.4g mJ", j*1000)
		}
	}
	return func(j float64) string {
		if math.IsNaN(j) {
			return "-"
		}
		return fmt.Sprintf("%.4g J", j)
	}
}

func tokens(x float64) string { return fmt.Sprintf("%.4g", x) }

// wallRow is the whole run's figure at the wall, gross or net, with how
// the plug had it; ok is false without --wall, or without a net figure
// when net.
func wallRow(r Result, net bool) (row, bool) {
	run := r.Run
	if run == nil || run.Summary == nil || run.Summary.Wall == nil || run.Wall == nil {
		return row{}, false
	}
	w, rw := run.Summary.Wall, run.Wall
	e, u, per, what := float64(w.EnergyJoules), float64(w.UncertaintyJoules), rw.JoulesPerOutputToken, "energy"
	if net {
		if rw.NetEnergyJoules == nil {
			return row{}, false
		}
		e, u, per, what = float64(*rw.NetEnergyJoules), val(rw.NetEnergyUncertaintyJoules), rw.NetJoulesPerOutputToken, "net energy"
	}
	how := "power readings"
	if w.Method == wall.MethodCounter {
		how = "energy counter"
	}
	after := fmt.Sprintf("(whole run, %s %s ± %s by the plug's %s, %s", what, output.Joules(e), output.Joules(u), how, w.Source.Address)
	if !rw.Resolved {
		after += "; not resolved: see the warnings"
	}
	return row{"At the wall:", fmt.Sprintf("%s per output token", perToken(val(per))), after + ")"}, true
}
