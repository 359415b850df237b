package output

import (
	"time"

	"github.com/exopower/exopower/internal/calibrate"
	"github.com/exopower/exopower/internal/wall"
	"github.com/exopower/exopower/internal/wire"
)

// NewWall is the summary's wall figure of a span of seconds, as the plug
// of info polled every interval measured it, and the warnings it comes
// with, each said to be the plug's.
func NewWall(sp wall.Span, info wall.Info, interval time.Duration, seconds float64) (*wire.Wall, []string) {
	w := &wire.Wall{EnergyJoules: wire.Num(sp.Joules), UncertaintyJoules: wire.Num(sp.UncertaintyJoules), Method: sp.Method,
		Coverage: wire.Num(sp.Coverage), Polls: sp.Polls, Resets: sp.Resets,
		Source: wire.WallSource{Kind: info.Kind, Model: info.Model, Firmware: info.Firmware, Name: info.Name, Address: info.Address,
			IntervalSeconds: wire.Num(interval.Seconds())}}
	if seconds > 0 {
		w.AvgPowerWatts = wire.Num(sp.Joules / seconds)
	}
	if info.HasCounter {
		r := wire.Num(info.CounterResolution)
		w.Source.CounterResolutionJoules = &r
	}
	var warnings []string
	for _, s := range sp.Warnings {
		warnings = append(warnings, "the wall's plug: "+s)
	}
	return w, warnings
}

// NewWallEstimated is the summary's estimate of the wall, e, from the
// calibration c.
func NewWallEstimated(e calibrate.Estimate, c *calibrate.Calibration) *wire.WallEstimated {
	return &wire.WallEstimated{EnergyJoules: wire.Num(e.Joules), UncertaintyJoules: wire.Num(e.UncertaintyJoules),
		AvgPowerWatts: wire.Num(e.AvgPowerWatts), From: e.From, Extrapolated: e.Extrapolated, Calibration: NewWallCalibration(e.Fit, c)}
}

// NewWallCalibration is the fit f of the calibration c, as the JSON
// names the fit an estimate came from.
func NewWallCalibration(f calibrate.Fit, c *calibrate.Calibration) wire.WallCalibration {
	return wire.WallCalibration{CalibratedAt: c.CalibratedAt, InterceptWatts: wire.Num(f.InterceptWatts), Slope: wire.Num(f.Slope),
		RMSWatts: wire.Num(f.RMSWatts), MaxResidualWatts: wire.Num(f.MaxResidualWatts), RSquared: wire.Num(f.RSquared),
		MinWatts: wire.Num(f.MinWatts), MaxWatts: wire.Num(f.MaxWatts), Steps: f.Points, PlugKind: c.Plug.Kind, PlugModel: c.Plug.Model}
}

// CalibrationDay is the day of a calibration that ended at (RFC 3339,
// UTC), as the estimates' text names it.
func CalibrationDay(at string) string {
	if len(at) >= 10 {
		return at[:10]
	}
	return at
}

// EstimateWall gives sum the wall estimated from c, this Mac's
// calibration (nil: none), over the span sum measured: the fit's line of
// the Mac's average power over the time the windows covered, held over
// the span's duration. It gives none where a plug read the wall, or no
// window covered the span; the error is why c cannot estimate this
// source's span (calibrate.ErrNoFitForSource).
func EstimateWall(sum *wire.Summary, c *calibrate.Calibration) error {
	secs := float64(sum.DurationSeconds)
	covered := secs * float64(sum.Coverage)
	if c == nil || sum.Wall != nil || !(covered > 0) {
		return nil
	}
	var system float64
	if s := sum.EnergyJoules.System; s != nil {
		system = float64(*s)
	}
	e, err := c.Estimate(secs, system/covered, sum.EnergyJoules.System != nil, float64(sum.EnergyJoules.Total)/covered)
	if err != nil {
		return err
	}
	sum.WallEstimated = NewWallEstimated(e, c)
	return nil
}
