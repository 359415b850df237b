package fakeplug

import (
	"math"
	"time"
)

// Step is a level of a Profile: from At into the period until the next
// step's At, the load draws Watts.
type Step struct {
	At    time.Duration
	Watts float64
}

// Profile is the power a fake plug's load draws, a step function of
// time: it repeats every Period from Origin (before Origin too), or with
// Period 0 is the first step's power for ever. Its energy over any span
// is exact (Energy), so a test can hold a meter to it.
type Profile struct {
	Origin time.Time
	Period time.Duration
	Steps  []Step
	// Smooth, when set, is the power instead of the steps.
	Smooth *Smooth
}

// Smooth is a power that is no step function: Power at an instant, and
// Energy, its exact integral over a span, which the caller knows.
type Smooth struct {
	Power  func(time.Time) float64
	Energy func(from, to time.Time) float64
}

// Constant is a load that always draws watts.
func Constant(watts float64) Profile { return Profile{Steps: []Step{{Watts: watts}}} }

// Square is a load that draws low for lowFor, then high for highFor,
// again and again from origin.
func Square(origin time.Time, low, high float64, lowFor, highFor time.Duration) Profile {
	return Profile{Origin: origin, Period: lowFor + highFor, Steps: []Step{{0, low}, {lowFor, high}}}
}

// At is the power at t, in watts.
func (p Profile) At(t time.Time) float64 {
	if p.Smooth != nil {
		return p.Smooth.Power(t)
	}
	if p.Period <= 0 {
		return p.Steps[0].Watts
	}
	_, x := p.split(t)
	w := p.Steps[0].Watts
	for _, s := range p.Steps {
		if s.At <= x {
			w = s.Watts
		}
	}
	return w
}

// Energy is the exact energy drawn over [from, to], in joules.
func (p Profile) Energy(from, to time.Time) float64 {
	if p.Smooth != nil {
		return p.Smooth.Energy(from, to)
	}
	if p.Period <= 0 {
		return p.Steps[0].Watts * to.Sub(from).Seconds()
	}
	return p.cumulative(to) - p.cumulative(from)
}

// cumulative is the energy of a periodic profile from Origin to t,
// negative before Origin.
func (p Profile) cumulative(t time.Time) float64 {
	n, x := p.split(t)
	return float64(n)*p.within(p.Period) + p.within(x)
}

// split is the whole periods from Origin to t (rounded down) and the
// time into the period after them, in integer nanoseconds so that a
// span of a day keeps its nanoseconds.
func (p Profile) split(t time.Time) (int64, time.Duration) {
	d := int64(t.Sub(p.Origin))
	n := d / int64(p.Period)
	if d%int64(p.Period) < 0 {
		n--
	}
	return n, time.Duration(d - n*int64(p.Period))
}

// within is the energy of the first x of a period.
func (p Profile) within(x time.Duration) float64 {
	e := 0.0
	for i, s := range p.Steps {
		end := p.Period
		if i+1 < len(p.Steps) {
			end = p.Steps[i+1].At
		}
		if d := min(x, end) - s.At; d > 0 {
			e += s.Watts * d.Seconds()
		}
	}
	return e
}

// counts is e in whole counts of res, rounded down as a device's
// counter is; the small slack keeps an energy that is a whole number of
// counts, computed a rounding below it, from losing one.
func counts(e, res float64) int64 {
	return int64(math.Floor(e/res + 1e-9))
}
