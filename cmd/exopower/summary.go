package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"

	"github.com/exopower/exopower/internal/powermetrics"
	"github.com/exopower/exopower/internal/sampler"
)

// schemaVersion is the version of the JSON output. Fields may be added
// within a version; none is renamed or removed.
const schemaVersion = 1

// scope is what powermetrics measures: the SoC's CPU, GPU and ANE.
const scope = "soc"

const scopeText = "SoC: CPU + GPU + ANE (not the display, memory, SSD or the wall)"

// Summary is the JSON result of a measured span. A run's summary is one
// of these; repeated runs or several machines would come as arrays of the
// same objects under new keys ("runs", "nodes"), with nothing renamed.
type Summary struct {
	SchemaVersion int `json:"schema_version"`
	// Type is "summary", which tells it apart from the "sample" lines of
	// exopower watch --json.
	Type    string   `json:"type"`
	Command []string `json:"command"`
	// ExitCode is the status exopower exits with for the command: its
	// own, or 128+N when signal N ended it. Null when no command ran.
	ExitCode *int `json:"exit_code"`
	// Signal is the name of the signal that ended the command, or null.
	Signal          *string    `json:"signal"`
	StartedAt       string     `json:"started_at"`
	DurationSeconds num        `json:"duration_seconds"`
	IntervalSeconds num        `json:"interval_seconds"`
	Samples         int        `json:"samples"`
	Coverage        num        `json:"coverage"`
	Scope           string     `json:"scope"`
	Source          Source     `json:"source"`
	EnergyJoules    Components `json:"energy_joules"`
	AvgPowerWatts   Components `json:"avg_power_watts"`
	PeakPowerWatts  Components `json:"peak_power_watts"`
	Warnings        []string   `json:"warnings"`

	// title heads the text summary when there is no command.
	title string
}

// Source says where the numbers come from.
type Source struct {
	Tool    string `json:"tool"`
	HWModel string `json:"hw_model"`
	OSBuild string `json:"os_build"`
}

// Components holds one number per part of the SoC, and their total.
type Components struct {
	Total num `json:"total"`
	CPU   num `json:"cpu"`
	GPU   num `json:"gpu"`
	ANE   num `json:"ane"`
}

func components(v powermetrics.Values) Components {
	return Components{Total: num(v.Total), CPU: num(v.CPU), GPU: num(v.GPU), ANE: num(v.ANE)}
}

// num is a float written with at most 12 significant digits: powermetrics
// writes six, and 17.6894 W reads better than 17.689400000000003 W, the
// float nearest 17689.4 mW / 1000.
type num float64

func (n num) MarshalJSON() ([]byte, error) {
	v := float64(n)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil, fmt.Errorf("cannot write %v as JSON", v)
	}
	v, _ = strconv.ParseFloat(strconv.FormatFloat(v, 'g', 12, 64), 64)
	if v != 0 && (math.Abs(v) < 1e-6 || math.Abs(v) >= 1e21) {
		return strconv.AppendFloat(nil, v, 'g', -1, 64), nil
	}
	return strconv.AppendFloat(nil, v, 'f', -1, 64), nil
}

// newSummary describes a sampler result. started is the wall-clock time
// of the start of the span.
func newSummary(r sampler.Result, started time.Time, interval time.Duration) *Summary {
	warnings := r.Warnings
	if warnings == nil {
		warnings = []string{}
	}
	return &Summary{
		SchemaVersion:   schemaVersion,
		Type:            "summary",
		StartedAt:       started.UTC().Format(time.RFC3339Nano),
		DurationSeconds: num(r.Duration.Seconds()),
		IntervalSeconds: num(interval.Seconds()),
		Samples:         r.Samples,
		Coverage:        num(r.Coverage),
		Scope:           scope,
		Source:          Source{Tool: "powermetrics", HWModel: r.HWModel, OSBuild: r.OSBuild},
		EnergyJoules:    components(r.Energy),
		AvgPowerWatts:   components(r.Average),
		PeakPowerWatts:  components(r.Peak),
		Warnings:        warnings,
	}
}

func writeJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// styles colour the summary on a terminal. Plain text with NO_COLOR, under
// CI, with TERM=dumb, or when the output is not a terminal.
type styles struct {
	plain                      bool
	title, label, value, total lipgloss.Style
	warn                       lipgloss.Style
}

func newStyles(w io.Writer, tty bool, getenv func(string) string) *styles {
	st := &styles{plain: !tty || getenv("NO_COLOR") != "" || getenv("CI") != "" || getenv("TERM") == "dumb"}
	if st.plain {
		return st
	}
	r := lipgloss.NewRenderer(w)
	st.title = r.NewStyle().Bold(true)
	st.label = r.NewStyle().Faint(true)
	st.value = r.NewStyle()
	st.total = r.NewStyle().Bold(true).Foreground(lipgloss.AdaptiveColor{Light: "#005f87", Dark: "#5fd7ff"})
	st.warn = r.NewStyle().Foreground(lipgloss.AdaptiveColor{Light: "#af5f00", Dark: "#ffaf00"})
	return st
}

func (st *styles) render(s lipgloss.Style, text string) string {
	if st.plain {
		return text
	}
	return s.Render(text)
}

// writeText writes the summary for people.
func writeText(w io.Writer, sum *Summary, st *styles) {
	var b strings.Builder
	head := "exopower"
	switch {
	case len(sum.Command) > 0:
		head += ": " + shellQuote(sum.Command)
	case sum.title != "":
		head += " " + sum.title
	}
	fmt.Fprintln(&b, st.render(st.title, head))
	row := func(label, text string) {
		fmt.Fprintf(&b, "  %s %s\n", st.render(st.label, fmt.Sprintf("%-9s", label)), text)
	}
	if sum.ExitCode != nil {
		status := fmt.Sprintf("%d", *sum.ExitCode)
		if sum.Signal != nil {
			status += " (" + *sum.Signal + ")"
		}
		row("exit", status)
	}
	row("duration", fmt.Sprintf("%s   %d samples, %s covered", seconds(float64(sum.DurationSeconds)), sum.Samples, percent(float64(sum.Coverage))))
	fmt.Fprintf(&b, "  %-9s %12s %12s %12s\n", "", "energy", "average", "peak")
	line := func(name string, e, avg, peak num, s lipgloss.Style) {
		fmt.Fprintf(&b, "  %s %s %s %s\n", st.render(st.label, fmt.Sprintf("%-9s", name)),
			st.render(s, fmt.Sprintf("%12s", joules(float64(e)))), st.render(s, fmt.Sprintf("%12s", watts(float64(avg)))),
			st.render(s, fmt.Sprintf("%12s", watts(float64(peak)))))
	}
	line("total", sum.EnergyJoules.Total, sum.AvgPowerWatts.Total, sum.PeakPowerWatts.Total, st.total)
	line("CPU", sum.EnergyJoules.CPU, sum.AvgPowerWatts.CPU, sum.PeakPowerWatts.CPU, st.value)
	line("GPU", sum.EnergyJoules.GPU, sum.AvgPowerWatts.GPU, sum.PeakPowerWatts.GPU, st.value)
	line("ANE", sum.EnergyJoules.ANE, sum.AvgPowerWatts.ANE, sum.PeakPowerWatts.ANE, st.value)
	if wh := float64(sum.EnergyJoules.Total) / 3600; wh >= 0.01 {
		row("", fmt.Sprintf("total %.3g Wh", wh))
	}
	row("scope", scopeText)
	src := sum.Source.Tool
	if sum.Source.HWModel != "" {
		src += " on " + sum.Source.HWModel
	}
	if sum.Source.OSBuild != "" {
		src += ", macOS build " + sum.Source.OSBuild
	}
	row("source", src)
	for _, wn := range sum.Warnings {
		fmt.Fprintf(&b, "  %s %s\n", st.render(st.warn, "warning:"), strings.ReplaceAll(wn, "\n", "\n    "))
	}
	io.WriteString(w, b.String())
}

func seconds(s float64) string {
	if s < 10 {
		return fmt.Sprintf("%.3f s", s)
	}
	return fmt.Sprintf("%.1f s", s)
}

func percent(f float64) string {
	if f >= 1 {
		return "100%"
	}
	return fmt.Sprintf("%.1f%%", math.Floor(f*1000)/10)
}

func joules(j float64) string {
	switch {
	case j < 10:
		return fmt.Sprintf("%.3f J", j)
	case j < 1000:
		return fmt.Sprintf("%.2f J", j)
	}
	return fmt.Sprintf("%.1f J", j)
}

func watts(w float64) string {
	if w < 10 {
		return fmt.Sprintf("%.3f W", w)
	}
	return fmt.Sprintf("%.2f W", w)
}

// shellQuote writes argv as a shell would need it typed.
func shellQuote(argv []string) string {
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
