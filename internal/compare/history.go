package compare

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/exopower/exopower/internal/output"
)

// GitHubBenchmark is an entry of the JSON that github-action-benchmark
// reads with tool: customSmallerIsBetter (its BenchmarkResult: an array
// of {name, unit, value, range?, extra?}).
type GitHubBenchmark struct {
	Name  string  `json:"name"`
	Unit  string  `json:"unit"`
	Value float64 `json:"value"`
	// Range is shown beside the value: "± σ" of the runs.
	Range string `json:"range,omitempty"`
	// Extra is shown in the chart's tooltip.
	Extra string `json:"extra,omitempty"`
}

// BMFMetric is a measure's metric in the Bencher Metric Format: its
// value, and its lower and upper values where known.
type BMFMetric struct {
	Value      float64  `json:"value"`
	LowerValue *float64 `json:"lower_value,omitempty"`
	UpperValue *float64 `json:"upper_value,omitempty"`
}

// BMF is a Bencher Metric Format document: benchmark name, then measure
// slug, then its metric.
type BMF map[string]map[string]BMFMetric

// historyFigure is one figure of the new export as the history services
// keep it: net where the export has a baseline, gross otherwise, so that
// the same bench always gives the same measures.
type historyFigure struct {
	bench, slug, label, unit string
	s                        Sample
}

func historyFigures(e *Export) []historyFigure {
	var out []historyFigure
	for _, b := range e.Benchmarks {
		for _, f := range b.Figures {
			h := historyFigure{bench: b.Name, slug: f.Slug, label: f.Label, unit: f.Unit}
			switch {
			case f.Net != nil:
				h.slug, h.label, h.s = "net-"+f.Slug, "net "+f.Label, *f.Net
			case f.Gross != nil && e.Idle == nil:
				h.s = *f.Gross
			default:
				continue
			}
			out = append(out, h)
		}
	}
	return out
}

// WriteGitHubBenchmark writes e's figures (net of the idle power where e
// has a baseline) as github-action-benchmark's customSmallerIsBetter
// JSON: each named "BENCHMARK (FIGURE)", its value the mean, its range
// the runs' σ, and in its extra the count, the mean's 1−alpha interval
// and, where rep compares it, the change and the verdict. rep may be
// nil.
func WriteGitHubBenchmark(w io.Writer, e *Export, rep *Report, alpha float64) error {
	entries := []GitHubBenchmark{}
	for _, h := range historyFigures(e) {
		g := GitHubBenchmark{Name: h.bench + " (" + h.label + ")", Unit: h.unit, Value: round(h.s.Mean)}
		if !math.IsNaN(h.s.SD) {
			g.Range = "± " + trimFloat(h.s.SD)
		}
		extra := []string{output.Count(h.s.N, kindNoun(e.Kind))}
		if lo, hi := MeanInterval(h.s, alpha); !math.IsNaN(lo) {
			extra = append(extra, fmt.Sprintf("%s interval of the mean: %s … %s", percent(1-alpha), trimFloat(lo), trimFloat(hi)))
		}
		r, of := rep.rowOf(h.bench, h.slug), ""
		if gross, ok := strings.CutPrefix(h.slug, "net-"); ok && r == nil {
			// compare judged the gross figure, OLD's net being too
			// near idle: the history keeps the net, and says which was
			// compared.
			r, of = rep.rowOf(h.bench, gross), " (of the gross "+strings.TrimPrefix(h.label, "net ")+": the old net could not be told from idle)"
		}
		if r != nil && r.Change != nil {
			extra = append(extra, fmt.Sprintf("against %s: %s, %s%s", rep.Old.File, signedPercent(float64(*r.Change)), r.Verdict, of))
		}
		g.Extra = strings.Join(extra, "\n")
		entries = append(entries, g)
	}
	return writeIndented(w, entries)
}

// WriteBencher writes e's figures (net of the idle power where e has a
// baseline) as Bencher Metric Format JSON: each benchmark's measures by
// slug ("net-energy", "net-energy-per-token"), each metric's value the
// mean, its lower and upper values the mean's 1−alpha confidence
// interval (none for a single run).
func WriteBencher(w io.Writer, e *Export, alpha float64) error {
	doc := BMF{}
	for _, h := range historyFigures(e) {
		m := BMFMetric{Value: round(h.s.Mean)}
		if lo, hi := MeanInterval(h.s, alpha); !math.IsNaN(lo) {
			lo, hi = round(lo), round(hi)
			m.LowerValue, m.UpperValue = &lo, &hi
		}
		if doc[h.bench] == nil {
			doc[h.bench] = map[string]BMFMetric{}
		}
		doc[h.bench][h.slug[:min(len(h.slug), 64)]] = m
	}
	return writeIndented(w, doc)
}

// rowOf is the row of the benchmark name's figure slug; nil for none,
// or without a report.
func (rep *Report) rowOf(name, slug string) *Row {
	if rep == nil {
		return nil
	}
	for i, r := range rep.Rows {
		if r.Name == name && r.Measure == slug {
			return &rep.Rows[i]
		}
	}
	return nil
}

func kindNoun(kind string) string {
	if kind == "llm" {
		return "request"
	}
	return "run"
}

// round is x to 12 significant digits, as exopower's own JSON writes
// numbers.
func round(x float64) float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 12, 64), 64)
	return r
}

// trimFloat writes x with at most 6 significant figures.
func trimFloat(x float64) string { return fmt.Sprintf("%.6g", x) }

func writeIndented(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
