package llm

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/exopower/exopower/internal/plot"
)

// PlotFormat is the format of the picture a path names: .svg or .png.
func PlotFormat(path string) (plot.Format, error) { return plot.FormatOf(path) }

// pictureSize is the picture's size, fit to share: 1200 px wide.
var pictureSize = plot.Size{Width: 1200, Height: 700}

// WritePlot draws the report's power over time, with each request's
// prefill and decode, in the format path names.
func WritePlot(path string) func(io.Writer, *Report) error {
	return func(w io.Writer, rep *Report) error {
		f, err := plot.FormatOf(path)
		if err != nil {
			return err
		}
		return plot.WritePhases(w, f, pictureSize, rep.phases())
	}
}

// phases is the picture of the report: every node's windows from the
// first request (or the baseline before it) to the last one's end.
func (rep *Report) phases() plot.Phases {
	var t0, t1 time.Time
	var marks []plot.RequestMarks
	n := 0
	for _, r := range rep.Results {
		for _, q := range r.Requests {
			if t0.IsZero() || q.sent.Before(t0) {
				t0 = q.sent
			}
			t1 = maxTime(t1, q.ended)
			n++
		}
	}
	if t0.IsZero() {
		return plot.Phases{Title: "no request was measured"}
	}
	// A little of the idle Mac on either side shows what the requests
	// rose from.
	t0, t1 = t0.Add(-time.Second), t1.Add(time.Second)
	for _, r := range rep.Results {
		for _, q := range r.Requests {
			m := plot.RequestMarks{Sent: q.sent.Sub(t0).Seconds(), Failed: q.Error != nil}
			m.First, m.Last = m.Sent, m.Sent
			if !q.first.IsZero() {
				m.First, m.Last = q.first.Sub(t0).Seconds(), q.last.Sub(t0).Seconds()
			} else {
				m.First, m.Last = q.ended.Sub(t0).Seconds(), q.ended.Sub(t0).Seconds()
			}
			marks = append(marks, m)
		}
	}
	p := plot.Phases{Title: rep.headline(), Caption: rep.caption(n), Requests: marks}
	for _, t := range rep.timelines {
		var steps []plot.Step
		for _, s := range t.steps(t0, t1, rep.least()) {
			steps = append(steps, plot.Step{Start: s[0], End: s[1], Watts: s[2]})
		}
		p.Series = append(p.Series, plot.NodeSeries{Name: t.Label, Windows: steps})
	}
	return p
}

// headline names the first setting and its figure, and how many more.
func (rep *Report) headline() string {
	if len(rep.Results) == 0 {
		return "exopower llm"
	}
	r := rep.Results[0]
	s := title(r)
	if f := r.Figures; f != nil && f.SoC != nil {
		out := f.SoC.JoulesPerOutputToken
		what := "per output token"
		if f.SoC.NetJoulesPerOutputToken != nil {
			out, what = f.SoC.NetJoulesPerOutputToken, "per output token, net of idle"
		}
		if out != nil {
			s += fmt.Sprintf(": %s %s (SoC)", perToken(float64(out.Mean)), what)
		}
	}
	if len(rep.Results) > 1 {
		s += fmt.Sprintf(", and %d more settings", len(rep.Results)-1)
	}
	return s
}

// caption names the Macs, the source and the endpoint.
func (rep *Report) caption(requests int) string {
	var macs []string
	for _, n := range rep.Nodes {
		macs = append(macs, n.Label)
	}
	return fmt.Sprintf("%s · %s · %d requests · %s", strings.Join(macs, ", "), rep.sourceName(), requests, rep.Endpoint)
}

func (rep *Report) sourceName() string {
	if len(rep.Results) > 0 && rep.Results[0].Run != nil && rep.Results[0].Run.Summary != nil {
		src := rep.Results[0].Run.Summary.Source
		if len(rep.Results[0].Run.Summary.Nodes) == 1 {
			src = rep.Results[0].Run.Summary.Nodes[0].Source
		}
		var parts []string
		for _, p := range []string{src.HWModel, src.Tool} {
			if p != "" {
				parts = append(parts, p)
			}
		}
		return strings.Join(parts, " · ")
	}
	return ""
}

// least is the shortest step the picture draws: half the interval.
func (rep *Report) least() time.Duration {
	return time.Duration(float64(rep.IntervalSeconds) * 1e9 / 2)
}
