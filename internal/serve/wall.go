package serve

import (
	"context"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/wall"
	"github.com/exopower/exopower/internal/wire"
)

// wallCollector publishes the plug of --wall, where serve reads one: a
// collector of its own, so that a serve without a plug exposes none of
// its series rather than zeros that were never measured.
type wallCollector struct {
	s                                  *Server
	energy, power, covered, polls      *prometheus.Desc
	failures, resets, info, resolution *prometheus.Desc
}

func newWallCollector(s *Server) *wallCollector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("exopower_wall_"+name, help, labels, nil)
	}
	return &wallCollector{
		s:          s,
		energy:     d("energy_joules_total", "Energy at the wall since exopower serve started, in joules, as the metered plug of --wall measured it: the Mac, its adapter's loss and whatever else is on the plug. Its power readings place the energy between the counts of its energy counter, and the counter holds the total within one count of its own, so that increase() over an hour or a day is the counter's and a rate over a minute follows the power."),
		power:      d("power_watts", "The metered plug's newest power reading, in watts; absent while the plug has not answered for 5 s and two intervals."),
		covered:    d("covered_seconds_total", "Time that the plug's readings cover, in seconds: its increase() over a range, divided by the range, is the wall's coverage."),
		polls:      d("polls_total", "Readings of the plug asked for."),
		failures:   d("poll_failures_total", "Readings of the plug that failed (no answer, a refused answer, a reading that cannot be true)."),
		resets:     d("counter_resets_total", "Times the plug's energy counter went back (a reboot) or jumped beyond belief between two readings: the energy across each is from its power readings."),
		info:       d("info", "The metered plug of --wall; always 1.", "kind", "model", "firmware", "address"),
		resolution: d("counter_resolution_joules", "One count of the plug's energy counter, in joules: what increase() over a range is exact to."),
	}
}

func (c *wallCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.energy, c.power, c.covered, c.polls, c.failures, c.resets, c.info, c.resolution} {
		ch <- d
	}
}

func (c *wallCollector) Collect(ch chan<- prometheus.Metric) {
	p := c.s.cfg.Wall
	t, st, info := p.Total(), p.Stats(), p.Info()
	metric := func(d *prometheus.Desc, kind prometheus.ValueType, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, kind, v, labels...)
	}
	metric(c.energy, prometheus.CounterValue, t.Joules)
	metric(c.covered, prometheus.CounterValue, t.Covered.Seconds())
	metric(c.polls, prometheus.CounterValue, float64(st.Polls))
	metric(c.failures, prometheus.CounterValue, float64(st.Failures))
	metric(c.resets, prometheus.CounterValue, float64(t.Resets))
	// A label that is not UTF-8 would fail the whole scrape: the
	// address is the user's own flag, the rest made safe already.
	label := func(v string) string { return strings.ToValidUTF8(v, "\uFFFD") }
	metric(c.info, prometheus.GaugeValue, 1, label(info.Kind), label(info.Model), label(info.Firmware), label(info.Address))
	if info.HasCounter {
		metric(c.resolution, prometheus.GaugeValue, info.CounterResolution)
	}
	if w, ok := p.PowerNow(); ok {
		metric(c.power, prometheus.GaugeValue, w)
	}
}

// wallOf is a span's energy at the wall, from its start to its end (now
// for an open span, whose reading does not wait), and the warnings that
// come with it; nil without a plug.
func (s *Server) wallOf(ctx context.Context, o *openSpan, ended *time.Time) (*wire.Wall, []string) {
	p := s.cfg.Wall
	if p == nil {
		return nil, nil
	}
	from := o.span.Start
	var sp wall.Span
	to := time.Now()
	if ended != nil {
		to = *ended
		sp = p.Span(ctx, from, to)
	} else {
		sp = p.Read(from, to)
	}
	return output.NewWall(sp, p.Info(), p.Interval(), to.Sub(from).Seconds())
}

// wallStatus is the plug's part of /v1/status; nil without one.
func (s *Server) wallStatus() *wire.StatusWall {
	p := s.cfg.Wall
	if p == nil {
		return nil
	}
	t, st, info := p.Total(), p.Stats(), p.Info()
	w := &wire.StatusWall{Kind: info.Kind, Model: info.Model, Firmware: info.Firmware, Address: info.Address,
		EnergyJoules: wire.Num(t.Joules), CoveredSeconds: wire.Num(t.Covered.Seconds()), Resets: t.Resets,
		Polls: st.Polls, PollFailures: st.Failures, IntervalSeconds: wire.Num(p.Interval().Seconds())}
	if st.LastError != "" {
		e := st.LastError
		w.LastError = &e
	}
	if !st.LastOK.IsZero() {
		at := stamp(st.LastOK)
		w.LastReadingAt = &at
	}
	if now, ok := p.PowerNow(); ok {
		v := wire.Num(now)
		w.PowerWatts = &v
	}
	return w
}
