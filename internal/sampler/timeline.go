package sampler

import (
	"time"

	"github.com/exopower/exopower/internal/power"
)

// Window is a sample window placed on exopower's monotonic timeline.
type Window struct {
	Start, End time.Time
	// Power is the window's average power, in watts: its energy over
	// its length, which the ledger integrates.
	Power power.Values
	// Peak is the window's power as a peak, or a gauge of power now,
	// counts it (power.Sample.PeakPower): where a batch of counters
	// landed in it, their power over the time it accrued.
	Peak power.Values
	// Index is the powermetrics document the window came from.
	Index int
	// ThermalPressure is the document's, if the thermal sampler ran.
	ThermalPressure string
	// Has says which components the window reports.
	Has power.Reported
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

func (p *placer) place(s power.Sample) Window {
	w := Window{Power: s.Power, Peak: s.PeakPower(), Index: s.Index, End: s.Arrival, ThermalPressure: s.ThermalPressure, Has: s.Has}
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
