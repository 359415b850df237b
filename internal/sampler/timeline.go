package sampler

import (
	"time"

	"github.com/exopower/exopower/internal/powermetrics"
	"github.com/exopower/exopower/internal/trapz"
)

// Window is a sample window placed on exopower's monotonic timeline.
type Window struct {
	Start, End time.Time
	// Power is the window's average power, in watts.
	Power powermetrics.Values
	// Index is the powermetrics document the window came from.
	Index int
	// ThermalPressure is the document's, if the thermal sampler ran.
	ThermalPressure string
}

// placer puts windows on the timeline.
//
// A document says how long its window was (elapsed_ns) and arrives a
// little after the window ends. powermetrics's windows follow each other
// without gaps, so each window starts where the previous one ended; its
// end is that start plus its length, unless it arrived earlier than that,
// which means the previous end was placed late by the delay of the pipe.
// That keeps the timeline free of the arrival jitter, and two documents
// read in one go (same arrival) still get their own lengths. After a
// document was lost the chain is broken, and the next window is placed by
// its arrival alone.
type placer struct {
	end     time.Time
	chained bool
}

func (p *placer) place(s powermetrics.Sample) Window {
	w := Window{Power: s.Power, Index: s.Index, End: s.Arrival, ThermalPressure: s.ThermalPressure}
	if p.chained {
		w.Start = p.end
		if predicted := p.end.Add(s.Window); predicted.Before(w.End) {
			w.End = predicted
		}
	} else {
		w.Start = s.Arrival.Add(-s.Window)
		if !p.end.IsZero() && w.Start.Before(p.end) {
			w.Start = p.end // overlaps the window before a lost one
		}
	}
	p.end, p.chained = w.End, true
	return w
}

// breakChain says a document was lost: the next window cannot be placed
// from the end of the last one.
func (p *placer) breakChain() { p.chained = false }

// tally is everything measured from the origin up to the last window
// added. It is a plain value, so a copy is a snapshot.
type tally struct {
	acc     [4]trapz.Accumulator // CPU, GPU, ANE, total
	peak    powermetrics.Values
	samples int
	covered time.Duration
	end     time.Time // end of the last window counted
}

// add counts the part of w that lies within [origin, to].
func (t *tally) add(w Window, origin, to time.Time) {
	a, b := later(w.Start, origin), earlier(w.End, to)
	if !b.After(a) {
		return
	}
	pa, pb := a.Sub(origin), b.Sub(origin)
	for i, watts := range [4]float64{w.Power.CPU, w.Power.GPU, w.Power.ANE, w.Power.Total} {
		t.acc[i].Add(trapz.Point{At: pa, Watts: watts})
		t.acc[i].Add(trapz.Point{At: pb, Watts: watts})
	}
	t.peak = t.peak.Max(w.Power)
	t.samples++
	t.covered += b.Sub(a)
	t.end = b
}

func (t *tally) energy() powermetrics.Values {
	return powermetrics.Values{CPU: t.acc[0].Joules(), GPU: t.acc[1].Joules(), ANE: t.acc[2].Joules(), Total: t.acc[3].Joules()}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// ringSize is how many recent windows are kept to answer for a span that
// ended before they arrived: at 100 ms, the last 100 s.
const ringSize = 1024

type entry struct {
	w      Window
	before tally
}

// ledger integrates the windows after an origin in constant memory: the
// running tally, and the last ringSize windows with the tally before each,
// so that the span can be cut at any recent instant.
type ledger struct {
	origin time.Time
	live   tally
	ring   [ringSize]entry
	n      int // windows added in all
}

func (l *ledger) add(w Window) {
	if !w.End.After(l.origin) {
		return
	}
	l.ring[l.n%ringSize] = entry{w: w, before: l.live}
	l.n++
	l.live.add(w, l.origin, w.End)
}

// until returns the tally of [origin, end]. ok is false when end is older
// than the windows the ring still holds.
func (l *ledger) until(end time.Time) (t tally, ok bool) {
	first := max(0, l.n-ringSize)
	for i := first; i < l.n; i++ {
		e := &l.ring[i%ringSize]
		if !e.w.End.After(end) {
			continue
		}
		if i == first && first > 0 && e.w.Start.After(end) {
			return tally{}, false
		}
		t = e.before
		t.add(e.w, l.origin, end)
		return t, true
	}
	return l.live, true
}
