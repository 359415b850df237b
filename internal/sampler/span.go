package sampler

import (
	"fmt"
	"math"
	"time"

	"github.com/exopower/exopower/internal/power"
)

// Span is a stretch of the stream's timeline being measured, from Start
// to the end its owner gives when it closes it. Any number of spans may be
// open over one stream at once; each reads the same ledger.
type Span struct {
	// Start is the start of the span, t = 0, on the monotonic clock.
	Start time.Time

	begin    tally // E and C at Start, once a window reaches past it
	resolved bool

	// What the windows that reach into the span add, as they come.
	peak    power.Values
	samples int
	has     power.Reported
	recent  [recentSize]undo // to take back windows that start after the end
	nrecent int
	lost    notes // documents refused while the span was open
	crowded notes // windows that had no room on the timeline
	breaks  notes // breaks in the stream while the span was open
	// disagree counts the windows whose combined_power was not CPU + GPU
	// + ANE, and by how much at most, in watts.
	disagree    int
	disagreeMax float64
	long        []string
	// quirks counts the windows with each quirk, and how long the rails
	// that had them stood still.
	quirks power.QuirkTally
	// health is what the span refused to believe of each rail; dropped,
	// the readings its windows dropped, and why.
	health  power.Health
	dropped notes

	onWindow func(Window, Totals)
}

// recentSize is how many windows a span can take back at its end: those
// that arrived after the end it is given, before it was closed.
const recentSize = 16

type undo struct {
	start   time.Time
	peak    power.Values
	samples int
	quirks  power.QuirkTally
}

// notes are messages about refused documents, the first few kept.
type notes struct {
	count int
	msgs  []string
}

// maxNotes bounds the messages kept of one kind.
const maxNotes = 5

func (n *notes) add(msg string) {
	n.count++
	if len(n.msgs) < maxNotes {
		n.msgs = append(n.msgs, msg)
	}
}

func (n *notes) warning(source, noun, what string) string {
	msg := fmt.Sprintf("%d %s %ss could not be used; %s", n.count, source, noun, what)
	if n.count == 1 {
		msg = "1 " + source + " " + noun + " could not be used; " + what
	}
	return n.listed(msg)
}

// listed is head followed by the messages kept, one a line.
func (n *notes) listed(head string) string {
	msg := head
	for _, l := range n.msgs {
		msg += "\n  " + l
	}
	if n.count > len(n.msgs) {
		msg += fmt.Sprintf("\n  and %d more", n.count-len(n.msgs))
	}
	return msg
}

// Totals is what was measured from the start of a span to the end of a
// window.
type Totals struct {
	// Elapsed is the time from the start of the span.
	Elapsed time.Duration
	// Energy is in joules, per component.
	Energy power.Values
	// Peak is the highest window average, in watts, per component.
	Peak    power.Values
	Samples int
	// Has says which components the span's windows reported.
	Has power.Reported
}

// note takes a window just added to l. It reports whether the window
// reaches into the span, and then the span's totals after it.
func (sp *Span) note(w Window, l *ledger, interval time.Duration, noun string, smp *power.Sample) (Totals, bool) {
	if !w.End.After(sp.Start) {
		return Totals{}, false
	}
	sp.resolve(l)
	sp.recent[sp.nrecent%recentSize] = undo{start: w.Start, peak: sp.peak, samples: sp.samples, quirks: sp.quirks}
	sp.nrecent++
	// A batch's landing counts for the peak at its power over the time it
	// accrued: its window's power is no power drawn (see PeakPower).
	sp.peak = sp.peak.Max(smp.PeakPower())
	sp.samples++
	sp.has = sp.has.Or(smp.Has)
	sp.quirks.Add(smp)
	sp.health.Note(&smp.Rails)
	for _, n := range smp.Notes {
		sp.dropped.add(n)
	}
	if smp.CombinedDisagrees {
		sp.disagree++
		sp.disagreeMax = max(sp.disagreeMax, math.Abs(smp.CombinedPower-smp.Power.Total))
	}
	if msg, ok := longWindow(noun, smp.Index, smp.Window, interval, "the interval"); ok && len(sp.long) < maxNotes {
		sp.long = append(sp.long, msg)
	}
	return Totals{
		Elapsed: w.End.Sub(sp.Start),
		Energy:  l.live.energy().Sub(sp.begin.energy()),
		Peak:    sp.peak,
		Samples: sp.samples,
		Has:     sp.has,
	}, true
}

// resolve reads E and C at the span's start, once: when the first window
// that reaches past it arrives, or at the end if none did.
func (sp *Span) resolve(l *ledger) {
	if !sp.resolved {
		sp.begin, _ = l.at(sp.Start)
		sp.resolved = true
	}
}

// reading is the span's energy, coverage, peak and samples over
// [Start, end], and its windows' quirks. ok is false when end is older
// than the windows kept.
func (sp *Span) reading(l *ledger, end time.Time) (r Result, last time.Time, ok bool, quirks power.QuirkTally) {
	sp.resolve(l)
	t, ok := l.at(end)
	if !ok {
		t = l.live
	}
	r = Result{Start: sp.Start, Duration: end.Sub(sp.Start), Energy: t.energy().Sub(sp.begin.energy()), Has: sp.has, Health: sp.health}
	r.Peak, r.Samples, quirks = sp.takeBack(end)
	covered := t.covered - sp.begin.covered
	if r.Duration > 0 {
		r.Average = r.Energy.Scale(1 / r.Duration.Seconds())
		r.Coverage = min(1, float64(covered)/float64(r.Duration))
	} else if r.Samples > 0 {
		r.Coverage = 1
	}
	if t.end.After(sp.Start) {
		last = t.end
	}
	return r, last, ok, quirks
}

// takeBack returns the peak, the count and the quirks' counts of the
// windows that reach into the span and start before end: those that start
// at or after it arrived before the span was closed, but do not belong to
// it.
func (sp *Span) takeBack(end time.Time) (power.Values, int, power.QuirkTally) {
	peak, samples, quirks := sp.peak, sp.samples, sp.quirks
	for i := sp.nrecent - 1; i >= max(0, sp.nrecent-recentSize); i-- {
		u := &sp.recent[i%recentSize]
		if u.start.Before(end) {
			break
		}
		peak, samples, quirks = u.peak, u.samples, u.quirks
	}
	return peak, samples, quirks
}

// longWindow says that a window is far longer than the stream's typical
// one (of names it: the interval of a live stream). Its power is an
// average like any other, so it counts; but whatever ran was likely
// stopped, and people should know.
func longWindow(noun string, index int, window, typical time.Duration, of string) (string, bool) {
	if typical <= 0 || window <= max(10*typical, 5*time.Second) {
		return "", false
	}
	return fmt.Sprintf("%s %d covers %v, %.0f times %s: the Mac may have slept",
		noun, index, window.Round(time.Millisecond), float64(window)/float64(typical), of), true
}
