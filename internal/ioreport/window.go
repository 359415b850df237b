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
// counters in batches about 2 s apart.
const stuckAfter = 3 * time.Second

// telling is the shortest window that tells a still counter: in a
// shorter one (a span's edge asked for a reading just after one) a
// counter in whole millijoules may not move at a few watts.
const telling = 50 * time.Millisecond

// maxDropped is how many readings in a row may be dropped as bogus
// before the counters are taken to have left their course for good: the
// chain then starts again from the newest reading, a break.
const maxDropped = 4

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
//
// A reading whose counters went back, or moved more than the Mac can
// draw over the time they had (power.Bounds), or whose clock went back,
// is held and judged by the reading after it: where that one is back on
// the course of the last believed reading, the held one was a lone bogus
// reading, and is dropped, the energy across it taken from the readings
// on either side; where the reading after goes on from the held one, the
// counters were reset (a break) or jumped for good (that window is
// refused), and the chain goes on from the held reading, never from a
// bogus value.
type windows struct {
	plan   *Plan
	bounds power.Bounds

	have   bool
	anchor Reading // the last reading believed
	held   Reading // a reading in doubt, judged by the next
	doubt  bool    // held is in doubt
	// heldWhy is what is wrong with held, against anchor.
	heldWhy verdict
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
	// dropped counts the readings dropped since anchor; glitches, per
	// rail; notes say why, for the window that bridges them.
	dropped  int
	glitches [power.NumRails]int
	notes    []string
	index    int
	// bufs hold the values of anchor and held, which the caller's
	// buffers do not keep.
	bufs [2][]int64

	// Per channel of a rail: whether it moved in the last window, and
	// since when it has had its energy to show (the start of the last
	// window in which it moved): a step after standing still is judged
	// over that time, a step of a counter that moves steadily over its
	// window.
	movedLast []bool
	since     []time.Time
	// still is, per rail, since when its counter has stood still while
	// the others moved; zero while it moves.
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
	if w.doubt {
		w.resolve(r)
		return
	}
	if r.At.Equal(w.anchor.At) {
		return // two readings at once: the next window holds both's energy
	}
	if v := w.judge(&w.anchor, &r); v.bad() {
		w.hold(r, v)
		return
	}
	w.emit(&w.anchor, &r)
	w.keepAnchor(r)
}

// pending says that a reading is held in doubt: the next one judges it.
func (w *windows) pending() bool { return w.doubt }

// start begins a chain at r, whose counters nothing before judges.
// The readings dropped before it are still said, and counted, with
// the next window.
func (w *windows) start(r Reading) {
	w.have, w.doubt, w.dropped, w.mids = true, false, 0, w.mids[:0]
	w.keepAnchor(r)
	for i := range w.since {
		w.since[i], w.movedLast[i] = r.At, false
	}
	w.still = [rails]time.Time{}
}

// keepAnchor makes r the last reading believed, in a buffer of its own.
func (w *windows) keepAnchor(r Reading) {
	r.Values = w.keep(0, r.Values)
	w.anchor = r
}

// hold keeps r in doubt, for the next reading to judge.
func (w *windows) hold(r Reading, v verdict) {
	r.Values = w.keep(1, r.Values)
	w.held, w.heldWhy, w.doubt = r, v, true
}

// keep copies the counters that the plan reads of values into buffer i:
// only those are ever read again.
func (w *windows) keep(i int, values []int64) []int64 {
	if len(w.bufs[i]) != len(values) {
		w.bufs[i] = make([]int64, len(values))
	}
	for r := range rails {
		for _, t := range w.plan.terms[r] {
			w.bufs[i][t.index] = values[t.index]
		}
	}
	return w.bufs[i]
}

// resolve judges the reading in doubt by r, the one after it.
func (w *windows) resolve(r Reading) {
	h := w.held
	if r.At.Equal(h.At) {
		return // the next window holds both's energy
	}
	// Back on the course of the last reading believed: the held one was
	// a lone bogus reading.
	if r.At.After(w.anchor.At) && !w.judge(&w.anchor, &r).bad() {
		w.doubt = false
		w.drop(w.heldWhy.rail, w.heldWhy.what, h)
		w.emit(&w.anchor, &r)
		w.keepAnchor(r)
		return
	}
	// Going on from the held one: the counters (or the clock) took a new
	// course there.
	if r.At.After(h.At) && !w.judge(&h, &r).bad() {
		w.doubt = false
		w.newCourse(h, &r)
		return
	}
	// Neither: the held reading is dropped, and r is in doubt in its
	// place, unless the counters have left every course for too long.
	w.doubt = false
	w.drop(w.heldWhy.rail, w.heldWhy.what, h)
	if w.dropped >= maxDropped {
		w.leave(r)
		return
	}
	w.hold(r, w.judge(&w.anchor, &r))
}

// leave gives up on the stretch from the last reading believed to r, in
// which no reading could be true against another: its window is refused
// (or, where the clock is what failed, not measured), and the chain
// starts again from r.
func (w *windows) leave(r Reading) {
	v := w.heldWhy
	what := fmt.Sprintf("%d readings in a row could not be true, to line %d", w.dropped, w.held.Line)
	if w.held.Line == 0 {
		what = fmt.Sprintf("%d readings in a row could not be true", w.dropped)
	}
	var err error = &power.BreakError{Source: Name, Err: fmt.Errorf("%s, the last: %s", what, v.what)}
	if v.rail >= 0 && !v.back {
		err = &power.ImplausibleError{Rail: v.rail, Watts: v.watts, Window: r.At.Sub(w.anchor.At), Bounds: w.bounds, Detail: what}
	}
	w.out = append(w.out, outcome{err: err})
	w.start(r)
}

// newCourse takes h, the reading in doubt, as the start of the counters'
// new course, which r goes on from: a reset is a break; a jump, a
// refused window; a clock that went back, a break after which the
// readings are placed after the last before it.
func (w *windows) newCourse(h Reading, r *Reading) {
	v := w.heldWhy
	var err error
	switch {
	case v.clock:
		shift := w.anchor.At.Sub(h.At) + time.Millisecond
		w.offset += shift
		h.At, r.At = h.At.Add(shift), r.At.Add(shift)
		err = &power.BreakError{Source: Name, Err: fmt.Errorf("the readings' clock went back %v%s and went on from there", (shift - time.Millisecond).Round(time.Millisecond), where(h))}
	case v.long:
		err = &power.BreakError{Source: Name, Err: fmt.Errorf("the reading%s came after %s: the time between is not measured", where(h), v.what)}
	case v.back:
		err = &power.BreakError{Source: Name, Err: fmt.Errorf("%s%s and went on from there: a reset", v.what, where(h))}
	default:
		err = &power.ImplausibleError{Rail: v.rail, Watts: v.watts, Window: h.At.Sub(w.anchor.At), Bounds: w.bounds,
			Detail: "a step" + where(h) + " that the readings after it go on from"}
	}
	w.out = append(w.out, outcome{err: err})
	w.start(h)
	w.emit(&w.anchor, r)
	w.keepAnchor(*r)
}

// at says where a reading is, for messages: its line in a recording.
func where(r Reading) string {
	if r.Line > 0 {
		return fmt.Sprintf(" at line %d", r.Line)
	}
	return ""
}

// drop leaves out r, a reading that cannot be true because of rail:
// the window that bridges it takes the energy across it from the
// readings on either side, and its system's power as a point within.
func (w *windows) drop(rail Rail, what string, r Reading) {
	w.dropped++
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

// verdict is what is wrong with a window, if anything.
type verdict struct {
	// rail is the first rail that cannot be true, -1 for none (or the
	// clock).
	rail Rail
	// back: a counter of rail went back; clock: the readings' clock did;
	// long: the window is longer than power.MaxWindow.
	back, clock, long bool
	// watts is rail's power over the window, where it moved too much.
	watts float64
	what  string
}

func (v verdict) bad() bool { return v.rail >= 0 || v.clock || v.long }

// judge says whether the window from a to b can be true: b after a, no
// counter going back, and no rail moving more than the Mac's bound over
// the time its counters had (a counter that moved over the window before
// has the window; one that stood still, since it last moved, as a batch
// does), less one count of each of its channels. a is the reading last
// believed, or the one held in doubt after it.
func (w *windows) judge(a, b *Reading) verdict {
	dt := b.At.Sub(a.At)
	if dt <= 0 {
		return verdict{rail: -1, clock: true, what: fmt.Sprintf("its clock went back %v", (-dt).Round(time.Millisecond))}
	}
	if dt > power.MaxWindow {
		return verdict{rail: -1, long: true, what: fmt.Sprintf("a gap of %.4g days, longer than the %.0f days a window may last", dt.Hours()/24, power.MaxWindow.Hours()/24)}
	}
	e, _, back := w.plan.Energy(a.Values, b.Values)
	k := 0
	for r := range rails {
		rail := Rail(r)
		if back[r] {
			return verdict{rail: rail, back: true, what: fmt.Sprintf("the %s's counter went back by %.4g J", rail, w.backBy(r, a, b))}
		}
		var had time.Duration
		for _, t := range w.plan.terms[r] {
			moved, since := w.movedLast[k], w.since[k]
			if a != &w.anchor && a.Values[t.index] != w.anchor.Values[t.index] {
				moved = true // it moved up to the reading in doubt
			}
			if moved {
				had = max(had, dt)
			} else {
				had = max(had, b.At.Sub(since))
			}
			k++
		}
		if e[r] > w.bounds.Of(rail)*had.Seconds()+w.plan.quantum[r] {
			watts := e[r] / dt.Seconds()
			return verdict{rail: rail, watts: watts, what: fmt.Sprintf("the %s's counter moved %.4g J in %v (%.4g W, beyond the %.0f W that %s can draw)",
				rail, e[r], roundDur(dt), watts, w.bounds.Of(rail), w.bounds.Chip)}
		}
	}
	return verdict{rail: -1}
}

// backBy is how far rail r's counters went back from a to b, in joules.
func (w *windows) backBy(r int, a, b *Reading) float64 {
	var j float64
	for _, t := range w.plan.terms[r] {
		if d := b.Values[t.index] - a.Values[t.index]; d < 0 {
			j -= float64(d) * t.scale
		}
	}
	return j
}

func roundDur(d time.Duration) time.Duration {
	if d >= time.Millisecond {
		return d.Round(time.Microsecond)
	}
	return d
}

// systemOf takes the SMC's power of r only where it can be a
// measurement: 0 W is what Macs without power information read, and a
// power beyond the Mac's bound is a bogus reading of the SMC.
func (w *windows) systemOf(r *Reading) {
	if !r.HasSystem {
		return
	}
	switch {
	case r.System == 0:
		r.HasSystem = false
		w.zeroSystem++
	case !(r.System > 0 && r.System <= w.bounds.System):
		r.HasSystem = false
		w.badSystem++
		w.glitches[power.System]++
		if len(w.notes) < 3 {
			w.notes = append(w.notes, fmt.Sprintf("the SMC's power%s, %.4g W, was dropped: beyond the %.0f W that %s can draw", where(*r), r.System, w.bounds.System, w.bounds.Chip))
		}
	}
}

// emit makes the window from a to b, with what was dropped within it.
func (w *windows) emit(a, b *Reading) {
	dt := b.At.Sub(a.At)
	e, moved, _ := w.plan.Energy(a.Values, b.Values)
	s := power.Sample{Index: w.index, Arrival: b.At, Window: dt, Timestamp: b.Unix, Has: w.plan.Has}
	w.index++
	s.Energy = power.Values{CPU: e[CPU], GPU: e[GPU], ANE: e[ANE], DRAM: e[DRAM]}.Summed()
	if dt >= telling {
		w.habits(&s, e, a.At, b.At, moved, a.System != b.System || len(w.mids) > 0)
	}
	w.note(a, b)
	w.systemEnergy(&s, a, b)
	for r := range power.NumRails {
		s.Rails[r].Glitches = w.glitches[r]
	}
	if len(w.notes) > 0 {
		s.Notes = w.notes
	}
	w.dropped, w.glitches, w.notes, w.mids = 0, [power.NumRails]int{}, nil, w.mids[:0]
	s.Power = s.Energy.Scale(1 / dt.Seconds())
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
	// whose step holds the energy of the windows before it too.
	if floor := s.Energy.Total + s.Energy.DRAM; s.Energy.System < floor && s.Quirks&power.CounterBatched == 0 {
		s.Energy.System = floor
		s.Quirks |= power.SystemRaised
	}
}

// habits says what the counters of the rails that always draw did in
// the window [from, at]: moving in a step after standing still while
// the others moved (batched), standing still for longer than a batch
// (stuck, while the others and the system's power move), or for less
// (still: a batch to come). Each rail's note says how long it stood.
func (w *windows) habits(s *power.Sample, e [rails]float64, from, at time.Time, moved [rails]bool, systemMoved bool) {
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
		var level float64
		switch {
		case moved[r] && !w.still[r].IsZero():
			q, stood = power.CounterBatched, at.Sub(w.still[r])
			level = e[r] / stood.Seconds()
			w.still[r] = time.Time{}
		case moved[r] || !others:
		default:
			if w.still[r].IsZero() {
				w.still[r] = from
			}
			q, stood = power.CounterStill, at.Sub(w.still[r])
			if stood > stuckAfter && systemMoved {
				q = power.CounterFlat
			}
		}
		s.Rails[r] = power.RailNote{Quirks: q, Stood: stood, Level: level}
		s.Quirks |= q
	}
}
