// Package trapz integrates power over time by the trapezoid rule.
//
// It serves two kinds of input alike. Point readings (an instantaneous
// power at an instant) enter as one Point each. Window averages, which is
// what powermetrics reports, enter as two Points with the same value, one
// at the window's start and one at its end: the trapezoid through both
// edges is then the window's rectangle, and the step between one window
// and the next has dt = 0, so a run of windows integrates exactly. A
// trapezoid through the window ends alone would lag by half a window and
// err at the edges of a short run.
package trapz

import (
	"math"
	"time"
)

// Point is a power reading: Watts at time At, measured from any origin
// shared by the points integrated together.
type Point struct {
	At    time.Duration
	Watts float64
}

// Integrate returns the energy in joules under the points, in order.
// Steps with dt <= 0 add nothing (they are the vertical jumps between
// windows, or points out of order). A single point is taken as constant
// power over span; with no points the energy is zero.
func Integrate(points []Point, span time.Duration) float64 {
	var a Accumulator
	for _, p := range points {
		a.Add(p)
	}
	if a.Points() == 1 {
		return a.last.Watts * span.Seconds()
	}
	return a.Joules()
}

// Accumulator integrates a stream of points in constant memory, so that a
// day-long watch costs no more than a second of it. The zero value is ready
// to use, and an Accumulator is a plain value: copying it takes a snapshot.
type Accumulator struct {
	n       int
	first   time.Duration
	last    Point
	joules  float64
	comp    float64 // Kahan compensation: a day of 100 ms steps must not drift
	skipped int
}

// Add takes the next point. A point earlier than the last one is skipped
// (counted by Skipped) and does not move the accumulator; a point at the
// same instant changes the value without adding energy.
func (a *Accumulator) Add(p Point) {
	if a.n == 0 {
		a.n, a.first, a.last = 1, p.At, p
		return
	}
	dt := p.At - a.last.At
	if dt < 0 {
		a.skipped++
		return
	}
	if dt > 0 {
		a.add((a.last.Watts + p.Watts) / 2 * dt.Seconds())
	}
	a.n++
	a.last = p
}

func (a *Accumulator) add(x float64) {
	y := x - a.comp
	t := a.joules + y
	a.comp = (t - a.joules) - y
	a.joules = t
}

// Joules returns the energy integrated so far, in joules.
func (a *Accumulator) Joules() float64 { return a.joules }

// Span returns the time from the first point to the last.
func (a *Accumulator) Span() time.Duration {
	if a.n == 0 {
		return 0
	}
	return a.last.At - a.first
}

// MeanWatts returns the time-weighted average power over the span, in
// watts: Joules / Span. With a zero span it is the last value (NaN when
// there is no point at all).
func (a *Accumulator) MeanWatts() float64 {
	switch {
	case a.n == 0:
		return math.NaN()
	case a.Span() <= 0:
		return a.last.Watts
	}
	return a.joules / a.Span().Seconds()
}

// Points returns how many points were taken, not counting skipped ones.
func (a *Accumulator) Points() int { return a.n }

// Last returns the last point taken and whether there was one.
func (a *Accumulator) Last() (Point, bool) { return a.last, a.n > 0 }

// Skipped returns how many points were out of order and left out.
func (a *Accumulator) Skipped() int { return a.skipped }
