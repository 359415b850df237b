package serve

import (
	"fmt"
	"io"
	"math"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/exopower/exopower/internal/calibrate"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/sampler"
	"github.com/exopower/exopower/internal/wire"
)

// estimator holds this Mac's calibration (Config.Calibration) to the Mac
// once the stream has named it, at its first window, and estimates the
// wall from it: the same fit for every span and the counter, for as long
// as serve runs.
type estimator struct {
	find func(model string, hasSystem bool) (*calibrate.Calibration, string)
	file string
	log  io.Writer

	mu   sync.Mutex
	held bool // the calibration has been held to the Mac
	cal  *calibrate.Calibration
	fit  *calibrate.Fit
	from string
	why  string // why none is used, once held; "" where there is none at all
}

func newEstimator(cfg Config) *estimator {
	if cfg.Calibration == nil || cfg.Wall != nil {
		return nil
	}
	return &estimator{find: cfg.Calibration, file: cfg.CalibrationFile, log: cfg.Log}
}

// use is the calibration in use, its fit and the Mac's power it maps
// (calibrate.FromSystem or FromSoC); nil before the stream's first window
// (totals is read until then), and where none is used.
func (e *estimator) use(totals func() sampler.StreamTotals) (*calibrate.Calibration, *calibrate.Fit, string) {
	if e == nil {
		return nil, nil, ""
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.held {
		t := totals()
		if t.Windows == 0 {
			return nil, nil, ""
		}
		e.held = true
		e.cal, e.why = e.find(t.HWModel, t.Has.System)
		if e.cal != nil {
			e.fit, e.from, _ = e.cal.Pick(t.Has.System)
		}
		e.say()
	}
	return e.cal, e.fit, e.from
}

// say tells serve's log which calibration is used, or why the one found
// is not: where it runs as a daemon, the log is where that is read.
func (e *estimator) say() {
	switch {
	case e.log == nil:
	case e.cal != nil:
		fmt.Fprintf(e.log, "exopower serve: wall (estimated) from this Mac's calibration of %s (%s): wall = %s + %.3f × %s, RMS %s\n",
			output.CalibrationDay(e.cal.CalibratedAt), e.file, output.Watts(e.fit.InterceptWatts), e.fit.Slope, e.from, output.Watts(e.fit.RMSWatts))
	case e.why != "":
		fmt.Fprintf(e.log, "exopower serve: %s\n", e.why)
	}
}

// joules is the wall's energy over the time the stream's windows
// covered, estimated by fit from the Mac's power of from: as the fit is
// a line, intercept × the covered seconds + slope × the Mac's energy is
// the sum of every window's estimate, exactly. An intercept below 0 W
// (within the noise calibrate allows) is taken as 0 W, so that the
// counter never goes back while the Mac draws little.
func joules(fit *calibrate.Fit, from string, t *sampler.StreamTotals) float64 {
	mac := t.Energy.Total
	if from == calibrate.FromSystem {
		mac = t.Energy.System
	}
	return math.Max(0, fit.InterceptWatts)*t.Covered.Seconds() + fit.Slope*mac
}

// addWallEstimate gives sum, a span's summary, the wall estimated from
// the calibration in use, as exopower run estimates a command's.
func (s *Server) addWallEstimate(sum *wire.Summary) {
	if c, _, _ := s.est.use(s.meter.Totals); c != nil {
		output.EstimateWall(sum, c)
	}
}

// estimatedStatus is the calibration's part of /v1/status: the fit in
// use, or why none is; nil with a plug.
func (s *Server) estimatedStatus(t *sampler.StreamTotals) *wire.StatusWallEstimated {
	e := s.est
	if e == nil {
		return nil
	}
	c, fit, from := e.use(func() sampler.StreamTotals { return *t })
	st := &wire.StatusWallEstimated{File: e.file, From: from}
	if c != nil {
		wc := output.NewWallCalibration(*fit, c)
		j := wire.Num(joules(fit, from, t))
		st.Calibration, st.EnergyJoules = &wc, &j
		return st
	}
	e.mu.Lock()
	held, why := e.held, e.why
	e.mu.Unlock()
	switch {
	case why != "":
	case e.file == "":
		why = "the user who ran serve has no configuration directory ($HOME is not set): no calibration to read"
	case !held:
		why = "not known yet: the source has not named this Mac (its first window)"
	default:
		why = "no calibration of this Mac in " + e.file + ": make one with exopower calibrate --wall URL"
	}
	st.Unused = &why
	return st
}

// estimatedCollector publishes the wall estimated from this Mac's
// calibration, where serve reads no plug: a collector of its own, whose
// series are there only while a calibration is in use.
type estimatedCollector struct {
	s                 *Server
	energy, info, rms *prometheus.Desc
}

func newEstimatedCollector(s *Server) *estimatedCollector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("exopower_wall_estimated_"+name, help, labels, nil)
	}
	return &estimatedCollector{
		s: s,
		energy: d("energy_joules_total", "Energy at the wall since exopower serve started, in joules, estimated from this Mac's calibration (exopower calibrate), not measured: "+
			"the fit's line of the Mac's power (exopower_wall_estimated_info's from) over the time windows covered, intercept × covered seconds + slope × the Mac's energy, "+
			"so that increase() over a range is the estimate of that range."),
		info: d("info", "The calibration the wall is estimated from; always 1.", "calibrated_at", "from", "plug_kind", "plug_model"),
		rms: d("rms_watts", "The calibration's RMS residual, in watts: the typical error of the estimated power; "+
			"times increase(exopower_covered_seconds_total) over a range, the typical error of its energy."),
	}
}

func (c *estimatedCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.energy
	ch <- c.info
	ch <- c.rms
}

func (c *estimatedCollector) Collect(ch chan<- prometheus.Metric) {
	t := c.s.meter.Totals()
	cal, fit, from := c.s.est.use(func() sampler.StreamTotals { return t })
	if cal == nil {
		return
	}
	label := func(v string) string { return strings.ToValidUTF8(v, "\uFFFD") }
	ch <- prometheus.MustNewConstMetric(c.energy, prometheus.CounterValue, joules(fit, from, &t))
	ch <- prometheus.MustNewConstMetric(c.info, prometheus.GaugeValue, 1, label(cal.CalibratedAt), from, label(cal.Plug.Kind), label(cal.Plug.Model))
	ch <- prometheus.MustNewConstMetric(c.rms, prometheus.GaugeValue, fit.RMSWatts)
}
