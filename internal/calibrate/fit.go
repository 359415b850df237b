// Package calibrate fits the power at the wall as a straight line of the
// Mac's own power, from a ladder of loads read by a metered plug and by
// the Mac's sensors side by side, keeps the fit per Mac, and estimates
// the wall from it where no plug is read. The Mac's power is the SMC's
// system power where the source has it, the SoC's otherwise.
package calibrate

import (
	"errors"
	"fmt"
	"math"
)

// Point is one step of the ladder: the Mac's average power over the
// step (X, in W) and the wall's over the same span (Y, in W).
type Point struct{ X, Y float64 }

// Fit is wall = Intercept + Slope × the Mac's power, fitted by ordinary
// least squares, with its error over the points it was fitted to.
type Fit struct {
	// InterceptWatts is the wall's power where the Mac's would be 0 W:
	// the adapter's own draw and whatever else is on the plug.
	InterceptWatts float64 `json:"intercept_watts"`
	// Slope is the wall's watts per watt of the Mac's: above 1 by the
	// adapter's loss.
	Slope float64 `json:"slope"`
	// RMSWatts is the residuals' root mean square, MaxResidualWatts the
	// largest residual's size, both in W.
	RMSWatts         float64 `json:"rms_watts"`
	MaxResidualWatts float64 `json:"max_residual_watts"`
	// RSquared is the share of the wall's variance the line explains.
	RSquared float64 `json:"r_squared"`
	// Points is how many steps it was fitted to; MinWatts and MaxWatts
	// the range of the Mac's power they covered, outside which the fit
	// is an extrapolation.
	Points   int     `json:"points"`
	MinWatts float64 `json:"min_watts"`
	MaxWatts float64 `json:"max_watts"`
}

// At is the wall's power the fit gives for the Mac's x watts.
func (f Fit) At(x float64) float64 { return f.InterceptWatts + f.Slope*x }

// Linear fits y = a + b·x to pts by ordinary least squares. It fails
// where there are fewer than two points or the x do not vary: no line
// goes through them alone.
func Linear(pts []Point) (Fit, error) {
	n := float64(len(pts))
	if len(pts) < 2 {
		return Fit{}, fmt.Errorf("%d steps: a line needs two at least", len(pts))
	}
	var mx, my float64
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range pts {
		mx, my = mx+p.X/n, my+p.Y/n
		lo, hi = math.Min(lo, p.X), math.Max(hi, p.X)
	}
	// Centred sums: the powers are tens of watts apart by a few, and the
	// raw sums of squares would lose the difference.
	var sxx, sxy, syy float64
	for _, p := range pts {
		dx, dy := p.X-mx, p.Y-my
		sxx, sxy, syy = sxx+dx*dx, sxy+dx*dy, syy+dy*dy
	}
	if sxx == 0 || hi-lo < 1e-9*math.Max(1, math.Abs(hi)) {
		return Fit{}, errors.New("the Mac's power did not vary between the steps: no slope can be fitted")
	}
	f := Fit{Slope: sxy / sxx, Points: len(pts), MinWatts: lo, MaxWatts: hi}
	f.InterceptWatts = my - f.Slope*mx
	var ss float64
	for _, p := range pts {
		r := p.Y - f.At(p.X)
		ss += r * r
		f.MaxResidualWatts = math.Max(f.MaxResidualWatts, math.Abs(r))
	}
	f.RMSWatts = math.Sqrt(ss / n)
	f.RSquared = 1
	if syy > 0 {
		f.RSquared = 1 - ss/syy
	}
	return f, nil
}

// Bounds are what a fit must be to be trusted.
type Bounds struct {
	// SlopeMin and SlopeMax hold the slope: an adapter gives the Mac
	// less than it takes from the wall, never more, and loses a few
	// tens of percent at the most.
	SlopeMin, SlopeMax float64
	// MinRangeWatts is how far apart the Mac's power must be between the
	// lowest and the highest step for a slope to be told from the
	// readings' noise.
	MinRangeWatts float64
}

// SystemBounds are the bounds of a fit to the SMC's system power, the
// whole Mac's: the slope is the adapter's loss alone, 0.9 to 1.5 (10 %
// below 1 for the plug's and the SMC's calibration, 1.5 for an adapter
// that loses a third of what it takes, worse than any in the public
// measurements).
var SystemBounds = Bounds{SlopeMin: 0.9, SlopeMax: 1.5, MinRangeWatts: 3}

// SoCBounds are the bounds of a fit to the SoC's power, which leaves out
// the memory, the display, the fans and the rest, some of which grow with
// the load: the slope may be well above the adapter's loss, up to 3.
var SoCBounds = Bounds{SlopeMin: 0.9, SlopeMax: 3, MinRangeWatts: 3}

// Check says why f cannot be trusted, or nil where it can.
func (b Bounds) Check(f Fit) error {
	switch {
	case f.MaxWatts-f.MinWatts < b.MinRangeWatts:
		return fmt.Errorf("the Mac's power spanned %.2f W over the steps, less than the %.0f W a slope needs: the load did not raise it (a Mac held back by its temperature or its power mode?)", f.MaxWatts-f.MinWatts, b.MinRangeWatts)
	case f.Slope < b.SlopeMin || f.Slope > b.SlopeMax:
		return fmt.Errorf("the slope is %.3f W at the wall per W of the Mac's, outside %.1f to %.1f: the plug does not follow this Mac (is the Mac plugged into it, and nothing that changes beside it?)", f.Slope, b.SlopeMin, b.SlopeMax)
	case f.InterceptWatts < -math.Max(1, 2*f.RMSWatts):
		// An adapter draws something with nothing behind it; a little
		// below 0 is the readings' noise, more is a line that is not one.
		return fmt.Errorf("the fit puts the wall at %.2f W where the Mac draws 0 W: below nothing, which no adapter does", f.InterceptWatts)
	}
	return nil
}
