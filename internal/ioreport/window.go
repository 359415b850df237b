package ioreport

import (
	"fmt"
	"time"

	"github.com/exopower/exopower/internal/power"
)

// Name names this source in results and messages.
const Name = "ioreport"

// Reading is one snapshot of the subscription's counters and of the
// SMC: what the bindings hand over, and what a line of a recording holds.
type Reading struct {
	// At is when the reading was taken, on exopower's monotonic clock (a
	// recording's mono_ns, placed on it).
	At time.Time
	// Unix is the wall-clock time of the reading.
	Unix time.Time
	// Values are the plan's channels' cumulative counters, in its order.
	Values []int64
	// System is the SMC's system power at the reading, in watts, when
	// HasSystem.
	System    float64
	HasSystem bool
}

// stuckAfter is how long a counter may stay still while the others move
// before it counts as stuck rather than batched: macOS publishes some
// counters in batches about 2 s apart.
const stuckAfter = 3 * time.Second

// telling is the shortest window that tells a still counter: in a
// shorter one (a span's edge asked for a reading just after one) a
// counter in whole millijoules may not move at a few watts.
const telling = 50 * time.Millisecond

// windows turns successive readings into windows: a window's energy per
// rail is the exact difference of its two readings' counters; the
// system's, the trapezoid over the two readings of its power (one held
// constant where the other has none).
type windows struct {
	plan  *Plan
	prev  Reading
	have  bool
	index int
	// cpuStill is since when the CPU's counter has not moved while the
	// other counters did, zero while it moves.
	cpuStill time.Time
}

// next takes a reading and returns the window since the one before;
// ok is false for the first reading, which only starts the chain. A
// counter that went back ends the chain with a *power.BreakError: the
// reading starts a new one.
func (w *windows) next(r Reading) (s power.Sample, ok bool, err error) {
	prev := w.prev
	w.prev = r
	if !w.have {
		w.have = true
		return s, false, nil
	}
	dt := r.At.Sub(prev.At)
	e, moved, forward := w.plan.Energy(prev.Values, r.Values)
	if !forward {
		w.cpuStill = time.Time{}
		return s, false, &power.BreakError{Source: Name, Err: fmt.Errorf("an energy counter went back")}
	}
	if dt <= 0 {
		return s, false, nil // two readings at once: nothing between them
	}
	s = power.Sample{Index: w.index, Arrival: r.At, Window: dt, Timestamp: r.Unix, Has: w.plan.Has}
	w.index++
	s.Energy = power.Values{CPU: e[CPU], GPU: e[GPU], ANE: e[ANE], DRAM: e[DRAM]}.Summed()
	if dt >= telling {
		s.Quirks |= w.habits(prev.At, r.At, moved, prev.System != r.System)
	}
	if prev.HasSystem || r.HasSystem {
		s.Has.System = true
		p0, p1 := prev.System, r.System
		switch {
		case !prev.HasSystem:
			p0 = p1
		case !r.HasSystem:
			p1 = p0
		}
		s.Energy.System = (p0 + p1) / 2 * dt.Seconds()
		// The system's power holds the SoC's and the memory's: below
		// them, the SMC's reading lagged. Not where a batch of the
		// counters landed, whose step holds the energy of the windows
		// before it too.
		if floor := s.Energy.Total + s.Energy.DRAM; s.Energy.System < floor && s.Quirks&power.CounterBatched == 0 {
			s.Energy.System = floor
			s.Quirks |= power.SystemRaised
		}
	}
	s.Power = s.Energy.Scale(1 / dt.Seconds())
	return s, true, nil
}

// habits says what the counters did in the window [from, at]: the CPU
// counter moving in a step after standing still while the others moved
// (batched), standing still for longer than a batch (stuck, while the
// others and the system's power move), or standing still for less
// (still: a batch to come).
func (w *windows) habits(from, at time.Time, moved [rails]bool, systemMoved bool) power.Quirk {
	if !w.plan.Has.CPU {
		return 0
	}
	others := moved[GPU] || moved[ANE] || moved[DRAM]
	switch {
	case moved[CPU] && !w.cpuStill.IsZero():
		w.cpuStill = time.Time{}
		return power.CounterBatched
	case moved[CPU] || !others:
		return 0
	case w.cpuStill.IsZero():
		w.cpuStill = from
	}
	if at.Sub(w.cpuStill) > stuckAfter && systemMoved {
		return power.CounterFlat
	}
	return power.CounterStill
}
