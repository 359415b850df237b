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
	// Line is the reading's line in a recording, for messages; 0 live.
	Line int
}

// stuckAfter is how long a counter may stay still while the others move
// before it counts as stuck rather than batched: macOS publishes some
// counters in batches about 2 s apart. It is also the most a counter
// that stood still may have accrued beyond its window, for judging its
// step.
const stuckAfter = 3 * time.Second

// telling is the shortest window that tells a still counter or a power:
// in a shorter one (a span's edge asked for a reading just after one) a
// counter in whole millijoules may not move at a few watts, and one
// count of it is no power drawn.
const telling = 50 * time.Millisecond

// minSystemWatts is the least SMC power that is a reading: Macs without
// power information read 0 there.
const minSystemWatts = 0.1

// outcome is what a reading gave: a window, or why there is none (a
// refused window, a break).
type outcome struct {
	s   power.Sample
	err error
}

// windows turns successive readings into windows, believing none that
// cannot be true. A window's energy per rail is the exact difference of
// its two readings' counters; the system's, the trapezoid over the
// readings of its power at its edges (and at readings dropped within it).
// What it believes and refuses is judge.go's.
type windows struct {
	plan   *Plan
	bounds power.Bounds

	have   bool
	anchor Reading // the last reading believed
	// doubts are the readings in doubt since anchor, oldest first, each
	// with what is wrong with it against anchor: the readings after
	// them judge them (judge.go).
	doubts []doubt
	// offset places the readings after a clock that went back for good
	// after the ones before it.
	offset time.Duration
	// mids are the system's power at readings dropped since anchor, for
	// the trapezoid of the window that spans them.
	mids []point
	// lastSystem is the last point of the system's power taken; pts, a
	// window's points, reused.
	lastSystem point
	pts        []point
	// glitches counts the readings dropped since the last window, per
	// rail; notes say why, for the window that bridges them.
	glitches [power.NumRails]int
	notes    []string
	index    int
	// anchorBuf holds anchor's counters; spare, buffers for readings in
	// doubt: the caller's buffers are not kept.
	anchorBuf []int64
	spare     [][]int64
	// lastWindow is the last window's length: a gap far longer than it
	// is judged as a reading in doubt.
	lastWindow time.Duration

	// Per channel of a rail: whether it moved in the last window, and
	// since when it has had its energy to show (the start of the last
	// window in which it moved): a step after standing still is judged
	// over that time (up to stuckAfter more than its window), a step of
	// a counter that moves steadily over its window.
	movedLast []bool
	since     []time.Time
	// still is, per rail, since when its counter has stood still; zero
	// while it moves.
	still [rails]time.Time

	// out are the outcomes not yet handed over, from head on.
	out  []outcome
	head int
	// zeroSystem counts readings whose SMC gave 0 W; badSystem, readings
	// whose SMC power is beyond the bounds.
	zeroSystem, badSystem int
}

// point is the system's power at an instant.
type point struct {
	at    time.Time
	watts float64
}

// newWindows judges readings of plan from a Mac of model hwModel.
func newWindows(plan *Plan, hwModel string) windows {
	n := 0
	for r := range rails {
		n += len(plan.terms[r])
	}
	return windows{plan: plan, bounds: power.BoundsOf(hwModel), movedLast: make([]bool, n), since: make([]time.Time, n)}
}

// pop returns the oldest outcome not yet handed over.
func (w *windows) pop() (outcome, bool) {
	if w.head == len(w.out) {
		return outcome{}, false
	}
	o := w.out[w.head]
	if w.head++; w.head == len(w.out) {
		// All handed over: the slice is reused, not grown.
		w.out, w.head = w.out[:0], 0
	}
	return o, true
}

// push adds r to the chain; what it gives (windows, refusals, breaks)
// is then handed over by pop, in order.
func (w *windows) push(r Reading) {
	r.At = r.At.Add(w.offset)
	w.systemOf(&r)
	if rail, v, bad := w.plan.negative(r.Values); bad {
		// No counter of energy is below zero: the reading is not one,
		// whatever comes after it.
		w.drop(rail, fmt.Sprintf("the %s's counter read %d, below zero", rail, v), r)
		return
	}
	if !w.have {
		w.start(r)
		return
	}
	last := w.anchor.At
	if n := len(w.doubts); n > 0 {
		last = w.doubts[n-1].r.At
	}
	if r.At.Equal(last) {
		return // two readings at once: the next window holds both's energy
	}
	if len(w.doubts) > 0 {
		w.resolve(r)
		return
	}
	if v := w.judge(&w.anchor, &r); v.bad() {
		w.hold(r, v)
		return
	}
	w.emit(&w.anchor, &r)
	w.keepAnchor(r)
}

// pending says that a reading is held in doubt: the next ones judge it.
func (w *windows) pending() bool { return len(w.doubts) > 0 }

// start begins a chain at r, whose counters nothing before judges. The
// readings dropped before it are still said, and counted, with the next
// window.
func (w *windows) start(r Reading) {
	w.have, w.mids, w.lastWindow = true, w.mids[:0], 0
	w.release(0, len(w.doubts))
	w.keepAnchor(r)
	for i := range w.since {
		w.since[i], w.movedLast[i] = r.At, false
	}
	w.still = [rails]time.Time{}
}

// keepAnchor makes r the last reading believed, in a buffer of its own.
func (w *windows) keepAnchor(r Reading) {
	w.anchorBuf = w.keep(w.anchorBuf, r.Values)
	r.Values = w.anchorBuf
	w.anchor = r
}

// hold keeps r in doubt, for the readings after it to judge.
func (w *windows) hold(r Reading, v verdict) {
	var buf []int64
	if n := len(w.spare); n > 0 {
		buf, w.spare = w.spare[n-1], w.spare[:n-1]
	}
	r.Values = w.keep(buf, r.Values)
	w.doubts = append(w.doubts, doubt{r, v})
}

// release lets go of the readings in doubt from i to j, their buffers
// kept for the next.
func (w *windows) release(i, j int) {
	for _, d := range w.doubts[i:j] {
		w.spare = append(w.spare, d.r.Values)
	}
	w.doubts = append(w.doubts[:i], w.doubts[j:]...)
}

// keep copies the counters that the plan reads of values into buf (made
// anew where it is not values's length): only those are read again.
func (w *windows) keep(buf, values []int64) []int64 {
	if len(buf) != len(values) {
		buf = make([]int64, len(values))
	}
	for r := range rails {
		for _, t := range w.plan.terms[r] {
			buf[t.index] = values[t.index]
		}
	}
	return buf
}

// where says where a reading is, for messages: its line in a recording.
func where(r Reading) string {
	if r.Line > 0 {
		return fmt.Sprintf(" at line %d", r.Line)
	}
	return ""
}

// drop leaves out r, a reading that cannot be true because of rail (or
// the clock, rail -1): the window that bridges it takes the energy
// across it from the readings on either side, and its system's power as
// a point within.
func (w *windows) drop(rail Rail, what string, r Reading) {
	if rail >= 0 {
		w.glitches[rail]++
	}
	if len(w.notes) < 3 {
		w.notes = append(w.notes, fmt.Sprintf("a reading%s was dropped: %s", where(r), what))
	}
	if r.HasSystem && w.have && r.At.After(w.anchor.At) {
		w.mids = append(w.mids, point{r.At, r.System})
	}
}

// systemOf takes the SMC's power of r only where it can be a
// measurement: 0 W is what Macs without power information read, and a
// power beyond the Mac's bound, or below zero, is a bogus reading of
// the SMC.
func (w *windows) systemOf(r *Reading) {
	if !r.HasSystem {
		return
	}
	switch {
	case r.System >= 0 && r.System < minSystemWatts:
		r.HasSystem = false
		w.zeroSystem++
	case !(r.System >= 0 && r.System <= w.bounds.System):
		r.HasSystem = false
		w.badSystem++
		w.glitches[power.System]++
		if len(w.notes) < 3 {
			w.notes = append(w.notes, fmt.Sprintf("the SMC's power%s, %.6g W, was dropped: no power %s can draw (at most %.0f W)", where(*r), r.System, w.bounds.Chip, w.bounds.System))
		}
	}
}

// emit makes the window from a to b (a is the anchor), with what was
// dropped within it.
func (w *windows) emit(a, b *Reading) {
	dt := b.At.Sub(a.At)
	e, moved, _ := w.plan.Energy(a.Values, b.Values)
	s := power.Sample{Index: w.index, Arrival: b.At, Window: dt, Timestamp: b.Unix, Has: w.plan.Has}
	w.index++
	s.Energy = power.Values{CPU: e[CPU], GPU: e[GPU], ANE: e[ANE], DRAM: e[DRAM]}.Summed()
	var level [rails]float64 // a rail's power as a peak may count it, where set
	var leveled [rails]bool
	w.habits(&s, e, a.At, b.At, moved, a.System != b.System || len(w.mids) > 0, &level, &leveled)
	w.batches(&s, e, a, b, &level, &leveled)
	if dt < telling {
		// One count of a counter in a window this short is no power
		// drawn: a peak counts what is beyond it.
		for r := range rails {
			if !leveled[r] {
				level[r], leveled[r] = max(0, e[r]-w.plan.quantum[r])/dt.Seconds(), true
			}
		}
	}
	w.note(a, b)
	w.systemEnergy(&s, a, b)
	for r := range power.NumRails {
		s.Rails[r].Glitches = w.glitches[r]
	}
	if len(w.notes) > 0 {
		s.Notes = w.notes
	}
	w.glitches, w.notes, w.mids, w.lastWindow = [power.NumRails]int{}, nil, w.mids[:0], dt
	s.Power = s.Energy.Scale(1 / dt.Seconds())
	if leveled != [rails]bool{} {
		peak := s.Power
		for r, p := range []*float64{&peak.CPU, &peak.GPU, &peak.ANE, &peak.DRAM} {
			if leveled[r] {
				*p = level[r]
			}
		}
		s.Peak, s.PeakSet = peak.Summed(), true
	}
	w.out = append(w.out, outcome{s: s})
}

// note records which channels moved in the window from a to b.
func (w *windows) note(a, b *Reading) {
	k := 0
	for r := range rails {
		for _, t := range w.plan.terms[r] {
			w.movedLast[k] = b.Values[t.index] != a.Values[t.index]
			if w.movedLast[k] {
				w.since[k] = a.At
			}
			k++
		}
	}
}

// systemEnergy is the trapezoid of the system's power over the window's
// readings and those dropped within it, raised to the SoC's and the
// memory's where it came out below them. An edge without the SMC's
// power holds the nearest point of the window, or at the start the last
// one before it, if no older than stuckAfter: the SMC's power is a
// reading at an instant, and a reading or two without it is no gap.
func (w *windows) systemEnergy(s *power.Sample, a, b *Reading) {
	pts := w.pts[:0]
	if a.HasSystem {
		pts = append(pts, point{a.At, a.System})
	} else if w.lastSystem.at.After(a.At.Add(-stuckAfter)) {
		pts = append(pts, point{a.At, w.lastSystem.watts})
	}
	for _, p := range w.mids {
		if p.at.After(a.At) && p.at.Before(b.At) {
			pts = append(pts, p)
		}
	}
	if b.HasSystem {
		pts = append(pts, point{b.At, b.System})
	}
	if len(pts) == 0 {
		return
	}
	w.lastSystem = pts[len(pts)-1]
	pts = append(pts, point{b.At, w.lastSystem.watts})
	w.pts = pts
	s.Has.System = true
	prev := point{a.At, pts[0].watts}
	for _, p := range pts {
		s.Energy.System += (prev.watts + p.watts) / 2 * p.at.Sub(prev.at).Seconds()
		prev = p
	}
	// The system's power holds the SoC's and the memory's: below them,
	// the SMC's reading lagged. Not where a batch of the counters landed,
	// whose step holds the energy of the windows before it too, nor in a
	// window too short for a count of the counters to be a power.
	floor := s.Energy.Total + s.Energy.DRAM
	if s.Energy.System < floor && s.Quirks&power.CounterBatched == 0 && s.Window >= telling {
		s.Energy.System = floor
		s.Quirks |= power.SystemRaised
	}
}

// habits says what the counters of the rails that always draw did in
// the window [from, at]: moving in a step after standing still (batched;
// its peak is its energy over the time it stood), standing still for
// longer than a batch while the others and the system's power moved
// (stuck), or for less while the others moved (still: a batch to come).
// Each rail's note says how long it stood. A window shorter than telling
// tells a counter that moved, not one that stood still.
func (w *windows) habits(s *power.Sample, e [rails]float64, from, at time.Time, moved [rails]bool, systemMoved bool, level *[rails]float64, leveled *[rails]bool) {
	for _, r := range power.HabitRails {
		if !w.plan.Has.Has(r) {
			continue
		}
		others := false
		for o := range rails {
			others = others || o != int(r) && moved[o]
		}
		var q power.Quirk
		var stood time.Duration
		switch {
		case moved[r] && !w.still[r].IsZero():
			q, stood = power.CounterBatched, at.Sub(w.still[r])
			level[r], leveled[r] = e[r]/stood.Seconds(), true
			w.still[r] = time.Time{}
		case moved[r] || at.Sub(from) < telling:
		default:
			if w.still[r].IsZero() {
				w.still[r] = from
			}
			if stood = at.Sub(w.still[r]); others {
				q = power.CounterStill
				if stood > stuckAfter && systemMoved {
					q = power.CounterFlat
				}
			}
		}
		s.Rails[r] = power.RailNote{Quirks: q, Stood: stood}
		s.Quirks |= q
	}
}

// batches marks the rails whose energy in the window is beyond what the
// Mac draws over the window alone, which judge believed as a batch
// landing after the counter stood still: the window holds the batch's
// energy, and a peak counts it over the time it accrued.
func (w *windows) batches(s *power.Sample, e [rails]float64, a, b *Reading, level *[rails]float64, leveled *[rails]bool) {
	dt := b.At.Sub(a.At)
	for r := range rails {
		rail := Rail(r)
		if e[r] <= w.bounds.Of(rail)*dt.Seconds()+w.plan.quantum[r] {
			continue
		}
		n := &s.Rails[r]
		if n.Quirks&power.CounterBatched != 0 {
			continue // habits saw it land, and how long it stood
		}
		had := w.allowance(r, a, b)
		n.Quirks |= power.CounterBatched
		n.Stood = had
		s.Quirks |= power.CounterBatched
		level[r], leveled[r] = e[r]/had.Seconds(), true
	}
}
