package ioreport

import (
	"fmt"
	"time"

	"github.com/exopower/exopower/internal/power"
)

// What a reading may be believed of, and what is done with one in doubt.
//
// A reading whose counters went back, or moved more than the Mac can
// draw over the time they had (power.Bounds; a counter that moved over
// the window before has the window, one that stood still the time since
// it last moved, as a batch does, but no more than stuckAfter beyond
// the window), whose rails together moved more than the SoC can draw,
// whose clock went back, or that comes after a gap far longer than the
// windows before it, is held in doubt and judged by the readings after
// it. Where one of them is back on the course of the last reading
// believed, the readings in doubt were bogus: they are dropped, and the
// window that spans them takes its energy from the readings on either
// side. Where one goes on from a reading in doubt, the counters (or the
// clock) took a new course there: a reset is a break, a jump a refused
// window, a clock that went back a break after which the readings are
// placed after the last before it, a long gap a window (the Mac slept),
// and the chain goes on from that reading, never from a bogus value.
// Readings in doubt before it, and after it, are dropped. maxDropped
// readings in doubt that nothing after them settles are refused
// together, and the chain starts again.

// maxDropped is how many readings may be in doubt at once before the
// counters are taken to have left every course.
const maxDropped = 4

// doubt is a reading in doubt, and what is wrong with it against the
// last reading believed.
type doubt struct {
	r Reading
	v verdict
}

// verdict is what is wrong with a window, if anything.
type verdict struct {
	// rail is the first rail that cannot be true, -1 for none (or the
	// clock).
	rail Rail
	// back: a counter of rail went back; clock: the readings' clock did;
	// long: the window is longer than power.MaxWindow; gap: far longer
	// than the windows before it; total: the SoC's rails together moved
	// more than it can draw.
	back, clock, long, gap, total bool
	// watts is the power over the window where it moved too much.
	watts float64
	what  string
}

func (v verdict) bad() bool { return v.rail >= 0 || v.clock || v.long || v.gap }

// resolve judges the readings in doubt by r, the one after them.
func (w *windows) resolve(r Reading) {
	// Back on the course of the last reading believed: those in doubt
	// were bogus.
	if r.At.After(w.anchor.At) && !w.judge(&w.anchor, &r).bad() {
		w.dropDoubts(0, len(w.doubts))
		w.emit(&w.anchor, &r)
		w.keepAnchor(r)
		return
	}
	// Going on from one in doubt: a new course there. A clock that went
	// back takes two readings after it to believe: a monotonic clock
	// never goes back, and two bogus readings may agree.
	for i := range w.doubts {
		d := &w.doubts[i]
		if d.v.clock && i == len(w.doubts)-1 {
			continue
		}
		if r.At.After(d.r.At) && w.goesOn(d, &r) {
			w.newCourse(i, r)
			return
		}
	}
	if len(w.doubts) >= maxDropped {
		w.leave(r)
		return
	}
	w.hold(r, w.judge(&w.anchor, &r))
}

// goesOn says whether r goes on from d, a reading in doubt: the window
// between them can be true, and where d's counter went back (a reset),
// it moves again from there, as a counter that moved before would.
func (w *windows) goesOn(d *doubt, r *Reading) bool {
	if w.judge(&d.r, r).bad() {
		return false
	}
	if !d.v.back {
		return true
	}
	moved, k := false, 0
	for rail := range rails {
		for _, t := range w.plan.terms[rail] {
			if Rail(rail) == d.v.rail && w.movedLast[k] {
				moved = moved || r.Values[t.index] != d.r.Values[t.index]
			} else if Rail(rail) == d.v.rail {
				moved = true // it did not move before either
			}
			k++
		}
	}
	return moved
}

// dropDoubts drops the readings in doubt from i to j as bogus.
func (w *windows) dropDoubts(i, j int) {
	for _, d := range w.doubts[i:j] {
		w.drop(d.v.rail, d.v.what, d.r)
	}
	w.release(i, j)
}

// leave gives up on the stretch from the last reading believed to r, in
// which no reading could be true against another: its window is refused
// (or, where the clock is what failed, not measured), and the chain
// starts again from r.
func (w *windows) leave(r Reading) {
	v, n := w.judge(&w.anchor, &r), len(w.doubts)+1
	what := fmt.Sprintf("%d readings in a row could not be true", n)
	if r.Line > 0 {
		what += fmt.Sprintf(", to line %d", r.Line)
	}
	var err error = &power.BreakError{Source: Name, Err: fmt.Errorf("%s, the last: %s", what, v.what)}
	if v.rail >= 0 && !v.back {
		err = &power.ImplausibleError{Rail: v.rail, Total: v.total, Watts: v.watts, Window: r.At.Sub(w.anchor.At), Bounds: w.bounds, Detail: what}
	}
	w.dropDoubts(0, len(w.doubts))
	w.out = append(w.out, outcome{err: err})
	w.start(r)
}

// newCourse takes the i-th reading in doubt, h, as the start of the
// counters' new course, which r goes on from.
func (w *windows) newCourse(i int, r Reading) {
	d := w.doubts[i]
	h, v := d.r, d.v
	w.dropDoubts(0, i) // bogus against the last believed and against h
	var err error
	switch {
	case v.gap:
		// The Mac slept, or a recording paused: a window of its own.
		w.emit(&w.anchor, &h)
		w.keepAnchor(h)
		w.dropDoubts(1, len(w.doubts))
		w.release(0, 1)
		w.emit(&w.anchor, &r)
		w.keepAnchor(r)
		return
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
		err = &power.ImplausibleError{Rail: v.rail, Total: v.total, Watts: v.watts, Window: h.At.Sub(w.anchor.At), Bounds: w.bounds,
			Detail: "a step" + where(h) + " that the readings after it go on from"}
	}
	w.out = append(w.out, outcome{err: err})
	after := append([]doubt(nil), w.doubts[1:]...)
	w.start(h) // copies h, and lets go of every reading in doubt
	for _, d := range after {
		w.drop(d.v.rail, d.v.what, d.r) // bogus against h and r: said, and their system's power kept
	}
	w.emit(&w.anchor, &r)
	w.keepAnchor(r)
}

// judge says whether the window from a to b can be true: b after a, no
// counter going back, no channel nor rail moving more than the Mac's
// bound over the time it had (allowance), plus one count of each
// channel, the SoC's rails together no more than the SoC's bound, and
// no gap far longer than the windows before. a is the reading last
// believed, or one in doubt after it.
func (w *windows) judge(a, b *Reading) verdict {
	dt := b.At.Sub(a.At)
	switch {
	case dt <= 0:
		return verdict{rail: -1, clock: true, what: fmt.Sprintf("its clock went back %v", (-dt).Round(time.Millisecond))}
	case dt > power.MaxWindow:
		return verdict{rail: -1, long: true, what: fmt.Sprintf("a gap of %.4g days, longer than the %.0f days a window may last", dt.Hours()/24, power.MaxWindow.Hours()/24)}
	}
	e, _, back := w.plan.Energy(a.Values, b.Values)
	var socHad time.Duration
	for r := range rails {
		if back[r] {
			return verdict{rail: Rail(r), back: true, what: fmt.Sprintf("the %s's counter went back by %.4g J", Rail(r), w.backBy(r, a, b))}
		}
		if v := w.judgeRail(r, e[r], a, b); v.bad() {
			return v
		}
		if Rail(r) != DRAM {
			socHad = max(socHad, w.allowance(r, a, b))
		}
	}
	if soc := e[CPU] + e[GPU] + e[ANE]; soc > w.bounds.SoC*socHad.Seconds()+w.plan.quantum[CPU]+w.plan.quantum[GPU]+w.plan.quantum[ANE] {
		most := CPU
		for _, r := range []Rail{GPU, ANE} {
			if e[r] > e[most] {
				most = r
			}
		}
		return verdict{rail: most, total: true, watts: soc / dt.Seconds(), what: fmt.Sprintf("the SoC's counters moved %.4g J together in %v (%.4g W, beyond the %.0f W that %s can draw)",
			soc, roundDur(dt), soc/dt.Seconds(), w.bounds.SoC, w.bounds.Chip)}
	}
	if typical := w.lastWindow; a == &w.anchor && typical > 0 && dt > max(10*typical, 5*time.Second) {
		return verdict{rail: -1, gap: true, what: fmt.Sprintf("it came %v after the reading before, %.0f times the window before", dt.Round(time.Millisecond), float64(dt)/float64(typical))}
	}
	return verdict{rail: -1}
}

// judgeRail says whether rail r's energy e from a to b can be true:
// each of its channels, and the rail, within the Mac's bound over the
// time each had, plus one count of each channel.
func (w *windows) judgeRail(r int, e float64, a, b *Reading) verdict {
	rail, dt := Rail(r), b.At.Sub(a.At)
	bound := w.bounds.Of(rail)
	k := w.firstTerm(r)
	for _, t := range w.plan.terms[r] {
		d := float64(b.Values[t.index]-a.Values[t.index]) * t.scale
		if d > bound*w.had(k, t, a, b).Seconds()+t.scale {
			return w.tooMuch(rail, e, dt)
		}
		k++
	}
	if e > bound*w.allowance(r, a, b).Seconds()+w.plan.quantum[r] {
		return w.tooMuch(rail, e, dt)
	}
	return verdict{rail: -1}
}

// tooMuch is the verdict on rail's energy e over dt, beyond its bound.
func (w *windows) tooMuch(rail Rail, e float64, dt time.Duration) verdict {
	watts := e / dt.Seconds()
	return verdict{rail: rail, watts: watts, what: fmt.Sprintf("the %s's counter moved %.4g J in %v (%.4g W, beyond the %.0f W that %s can draw)",
		rail, e, roundDur(dt), watts, w.bounds.Of(rail), w.bounds.Chip)}
}

// allowance is the longest time any channel of rail r had for its
// energy from a to b.
func (w *windows) allowance(r int, a, b *Reading) time.Duration {
	var had time.Duration
	k := w.firstTerm(r)
	for _, t := range w.plan.terms[r] {
		had = max(had, w.had(k, t, a, b))
		k++
	}
	return had
}

// had is the time the k-th channel, t, had for its energy from a to b:
// the window, where it moved over the window before (or up to a, a
// reading in doubt); else the time since it last moved, as a batch's
// does, but no more than stuckAfter beyond the window.
func (w *windows) had(k int, t term, a, b *Reading) time.Duration {
	dt := b.At.Sub(a.At)
	moved := w.movedLast[k]
	if a != &w.anchor && a.Values[t.index] != w.anchor.Values[t.index] {
		moved = true
	}
	if moved {
		return dt
	}
	return min(max(b.At.Sub(w.since[k]), dt), dt+stuckAfter)
}

// firstTerm is the place of rail r's first channel among the plan's.
func (w *windows) firstTerm(r int) int {
	k := 0
	for o := range r {
		k += len(w.plan.terms[o])
	}
	return k
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
