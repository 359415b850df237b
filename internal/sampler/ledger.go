package sampler

import (
	"time"

	"github.com/exopower/exopower/internal/power"
	"github.com/exopower/exopower/internal/trapz"
)

// tally is what the stream measured from its first window up to an
// instant: the cumulative energy E(t) per component and the time covered
// by windows C(t). It is a plain value, so a copy is a snapshot, and any
// reading of a span is the difference of two tallies.
type tally struct {
	acc     [6]trapz.Accumulator // in the order of power.Values.Array
	covered time.Duration
	end     time.Time    // the instant the tally reaches; zero before any window
	last    power.Values // the power at end, which a bridge over a gap starts from
	// broken says the stream broke off at end and began again: there is
	// no bridge from end to the next window, whose time is not measured.
	broken bool
}

// add extends the tally over the part [from, to] of window w. The points
// are on the ledger's timeline, whose zero is origin. Each window enters
// as two points of its average power, so it integrates as a step; a gap
// since the last window is bridged by the trapezoid between them.
func (t *tally) add(w Window, from, to, origin time.Time) {
	if t.broken {
		t.point(from.Sub(origin), power.Values{})
		t.broken = false
	}
	t.point(from.Sub(origin), w.Power)
	t.point(to.Sub(origin), w.Power)
	t.covered += to.Sub(from)
	t.end, t.last = to, w.Power
}

func (t *tally) point(at time.Duration, p power.Values) {
	for i, watts := range p.Array() {
		t.acc[i].Add(trapz.Point{At: at, Watts: watts})
	}
}

func (t *tally) energy() power.Values {
	var e [6]float64
	for i := range t.acc {
		e[i] = t.acc[i].Joules()
	}
	return power.FromArray(e)
}

// breakOff ends the tally's line at its end: whatever comes next is not
// bridged to it, and the time between is not measured. Power drops to zero
// at end, which adds nothing, and rises again at the next window's start.
func (t *tally) breakOff(origin time.Time) {
	if t.end.IsZero() || t.broken {
		return
	}
	t.point(t.end.Sub(origin), power.Values{})
	t.last, t.broken = power.Values{}, true
}

// ringSize is how many recent windows the ledger keeps to answer E(t) for
// an instant before the newest window: at 100 ms, the last 100 s.
const ringSize = 1024

type entry struct {
	w      Window
	before tally // the tally at the end of the window before w
}

// ledger is the stream's energy over time, in constant memory: the
// running tally, and the last ringSize windows with the tally before
// each, so that E(t) can be read at any recent instant.
type ledger struct {
	origin time.Time // the first window's start: zero on the trapezoids' timeline
	live   tally     // E and C at the end of the newest window
	ring   [ringSize]entry
	n      int // windows added in all
}

// add puts the next window on the ledger.
func (l *ledger) add(w Window) {
	if l.n == 0 {
		l.origin = w.Start
	}
	l.ring[l.n%ringSize] = entry{w: w, before: l.live}
	l.n++
	l.live.add(w, w.Start, w.End, l.origin)
}

// at returns the tally at instant t: E(t) and C(t). ok is false when t
// lies inside a window older than the ring still holds.
func (l *ledger) at(t time.Time) (x tally, ok bool) {
	for i := max(0, l.n-ringSize); i < l.n; i++ {
		e := &l.ring[i%ringSize]
		if !e.w.End.After(t) {
			continue
		}
		x = e.before
		switch {
		case !e.w.Start.After(t):
			x.add(e.w, e.w.Start, t, l.origin)
		case x.end.IsZero():
			// Before the first window: nothing yet.
		case t.Before(x.end):
			return tally{}, false
		case x.broken:
			// Inside a break of the stream: nothing measured.
		default:
			// Inside the gap a lost document left: the bridge to the
			// next window, as far as t.
			f := float64(t.Sub(x.end)) / float64(e.w.Start.Sub(x.end))
			x.point(t.Sub(l.origin), x.last.Add(e.w.Power.Add(x.last.Scale(-1)).Scale(f)))
			x.end = t
		}
		return x, true
	}
	return l.live, true
}
