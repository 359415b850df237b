package calibrate

import (
	"errors"
	"math"
)

// Estimate is the wall's energy over a span, estimated from a fit of the
// Mac's power: not a measurement.
type Estimate struct {
	// Joules is the estimated energy at the wall; UncertaintyJoules is
	// the fit's RMS times the span's duration: the typical error of a
	// step's power in the ladder, held over the span. It leaves out what
	// the ladder did not hold (a brighter display, a charger, another
	// device on the plug since).
	Joules, UncertaintyJoules, AvgPowerWatts float64
	// From is "system" or "soc": which of the Mac's powers the fit maps.
	From string
	Fit  Fit
	// Extrapolated says the Mac's average power over the span was
	// outside the range the ladder covered.
	Extrapolated bool
}

// The Mac's power a fit maps to the wall.
const (
	FromSystem = "system"
	FromSoC    = "soc"
)

// ErrNoFitForSource is a calibration of the system's power alone, for a
// span that has only the SoC's.
var ErrNoFitForSource = errors.New("the calibration fits the wall to the system's power, and this source reads only the SoC's")

// Estimate estimates the wall over a span of seconds in which the Mac
// drew system watts on average (where hasSystem) and soc watts: from the
// system's fit where the span has the system's power, else from the
// SoC's.
func (c *Calibration) Estimate(seconds, system float64, hasSystem bool, soc float64) (Estimate, error) {
	f, from, err := c.Pick(hasSystem)
	if err != nil {
		return Estimate{}, err
	}
	x := soc
	if from == FromSystem {
		x = system
	}
	w := f.At(x)
	// The margin is the readings' noise: a span at the ladder's idle
	// power is not outside it.
	margin := math.Max(1, 2*f.RMSWatts)
	return Estimate{Joules: w * seconds, UncertaintyJoules: f.RMSWatts * seconds, AvgPowerWatts: w, From: from, Fit: *f,
		Extrapolated: x < f.MinWatts-margin || x > f.MaxWatts+margin}, nil
}

// Pick is the fit that maps a source's power to the wall, and which
// power it maps (FromSystem or FromSoC): the system's where the source
// reads it (hasSystem) and the calibration has its fit, else the SoC's.
// It is ErrNoFitForSource where the calibration has no fit for the
// source.
func (c *Calibration) Pick(hasSystem bool) (*Fit, string, error) {
	switch {
	case hasSystem && c.System != nil:
		return c.System, FromSystem, nil
	case c.SoC != nil:
		return c.SoC, FromSoC, nil
	}
	return nil, "", ErrNoFitForSource
}
