package llm

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/exopower/exopower/internal/plot"
	"github.com/exopower/exopower/internal/wall"
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
	p := plot.Phases{Title: rep.headline(), Caption: rep.caption(n), Requests: marks, Wall: wallSteps(rep.plug, t0, t1)}
	for _, t := range rep.timelines {
		var steps []plot.Step
		for _, s := range t.steps(t0, t1, rep.least()) {
			steps = append(steps, plot.Step{Start: s[0], End: s[1], Watts: s[2]})
		}
		p.Series = append(p.Series, plot.NodeSeries{Name: t.Label, Windows: steps})
	}
	return p
}

// wallSteps is the plug's power over [t0, t1] (--wall), in seconds from
// t0; none without a plug. A step a reading, from the midpoint with the
// reading before to the one after, its power the plug's energy over it
// over the time its readings covered (Session.Read): the reading itself
// where it is held over the step, nothing where none is (a plug that
// did not answer, or stalled), by the arithmetic of the run's figure.
func wallSteps(plug *wall.Session, t0, t1 time.Time) []plot.Step {
	if plug == nil {
		return nil
	}
	half := plug.Interval() / 2
	rs := plug.Since(t0.Add(-plug.Interval()))
	var steps []plot.Step
	for k, r := range rs {
		a, b := r.At.Add(-half), r.At.Add(half)
		if k > 0 {
			a = rs[k-1].At.Add(r.At.Sub(rs[k-1].At) / 2)
		}
		if k+1 < len(rs) {
			b = r.At.Add(rs[k+1].At.Sub(r.At) / 2)
		}
		if a.Before(t0) {
			a = t0
		}
		if b.After(t1) {
			b = t1
		}
		if !b.After(a) {
			continue
		}
		sp := plug.Read(a, b)
		if secs := b.Sub(a).Seconds() * sp.Coverage; secs > 0 {
			steps = append(steps, plot.Step{Start: a.Sub(t0).Seconds(), End: b.Sub(t0).Seconds(), Watts: sp.Joules / secs})
		}
	}
	return steps
}

// headline names the first setting and its figure, at the wall first
// where it was measured there, and how many more settings.
func (rep *Report) headline() string {
	if len(rep.Results) == 0 {
		return "exopower llm"
	}
	r := rep.Results[0]
	s := title(r)
	soc := socPerToken(r)
	switch w := wallPerToken(r); {
	case w.ok:
		s += ", per output token: " + w.text + " at the wall"
		if !w.resolved {
			// The warnings say why: a run shorter than the plug
			// resolves.
			s += " (not resolved)"
		}
		if soc.ok {
			s += ", " + soc.text + " (SoC)"
		}
		switch {
		case w.net && (soc.net || !soc.ok):
			s += ", net of idle"
		case w.net:
			s += "; at the wall net of idle, the SoC's gross"
		case soc.net:
			s += "; the SoC's net of idle, at the wall gross"
		}
	case soc.ok && soc.net:
		s += fmt.Sprintf(": %s per output token, net of idle (SoC)", soc.text)
	case soc.ok:
		s += fmt.Sprintf(": %s per output token (SoC)", soc.text)
	}
	if len(rep.Results) > 1 {
		s += fmt.Sprintf(", and %d more settings", len(rep.Results)-1)
	}
	return s
}

// perTokenFigure is a setting's energy per output token, as a title
// gives it: net of idle where there is a baseline.
type perTokenFigure struct {
	text              string
	ok, net, resolved bool
}

// socPerToken is the setting's mean energy per output token in the
// SoC.
func socPerToken(r Result) perTokenFigure {
	f := r.Figures
	if f == nil || f.SoC == nil {
		return perTokenFigure{}
	}
	out, net := f.SoC.JoulesPerOutputToken, f.SoC.NetJoulesPerOutputToken != nil
	if net {
		out = f.SoC.NetJoulesPerOutputToken
	}
	if out == nil {
		return perTokenFigure{}
	}
	return perTokenFigure{text: perToken(float64(out.Mean)), ok: true, net: net, resolved: true}
}

// wallPerToken is the setting's energy per output token at the wall
// (--wall, or the nodes' plugs).
func wallPerToken(r Result) perTokenFigure {
	if r.Run == nil || r.Run.Wall == nil || r.Run.Wall.JoulesPerOutputToken == nil {
		return perTokenFigure{}
	}
	w := r.Run.Wall
	out, net := w.JoulesPerOutputToken, w.NetJoulesPerOutputToken != nil
	if net {
		out = w.NetJoulesPerOutputToken
	}
	return perTokenFigure{text: perToken(float64(*out)), ok: true, net: net, resolved: w.Resolved}
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
