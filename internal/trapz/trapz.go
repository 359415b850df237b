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

import "time"

// Point is a power reading: Watts at time At, measured from any origin
// shared by the points integrated together.
type Point struct {
	At    time.Duration
	Watts float64
}

// Accumulator integrates a stream of points in constant memory, so that a
// day-long watch costs no more than a second of it. The zero value is ready
// to use, and an Accumulator is a plain value: copying it takes a snapshot.
type Accumulator struct {
	n      int
	last   Point
	joules float64
	comp   float64 // Kahan compensation: a day of 100 ms steps must not drift
}

// Add takes the next point. A point earlier than the last one is left out
// and does not move the accumulator; a point at the same instant changes
// the value without adding energy.
func (a *Accumulator) Add(p Point) {
	if a.n == 0 {
		a.n, a.last = 1, p
		return
	}
	dt := p.At - a.last.At
	if dt < 0 {
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
