package sampler

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/exopower/exopower/internal/power"
)

// book keeps the accounts of one stream, live or recorded alike: its
// windows placed on the timeline, the ledger of its energy, the spans
// open over it, and what the stream said of itself. It does no locking
// and no waiting; a Sampler does both around it.
type book struct {
	// source names the stream's source in results and warnings; notes are
	// what it says of itself, in every result's warnings.
	source string
	notes  []string
	// noun is what the source calls a reading: a document, a reading.
	noun string
	// interval is the sample interval the stream was asked for; zero for
	// a recording, which has none (and so no window is too long for it).
	interval time.Duration
	recorded bool
	placer   placer
	pace     pace
	ledger   ledger
	spans    []*Span
	first    *power.Sample
	last     power.Sample
	fatal    error // the stream cannot be measured at all
	ended    bool
	endErr   error          // how the stream ended (io.EOF for a clean end)
	breaks   int            // how often the stream broke off and began again
	has      power.Reported // the components the stream reported
	refused  map[string]int // documents refused, by Reason
	health   power.Health   // what the stream refused to believe, per rail
	out      []delivery
}

// delivery is a window for a span that watches its windows, handed over
// once the book is no longer held.
type delivery struct {
	f   func(Window, Totals)
	w   Window
	tot Totals
}

// take places a sample's window, puts it on the ledger and notes it in
// every open span. It returns the windows to hand to watching spans; the
// slice is reused by the next call.
func (b *book) take(s power.Sample) []delivery {
	if err := b.pace.note(s.Arrival, s.Window); err != nil && b.fatal == nil {
		b.fatal = err
	}
	w := b.placer.place(s)
	if b.first == nil {
		first := s
		b.first = &first
	}
	b.last = s
	b.has = b.has.Or(s.Has)
	b.health.Note(&s.Rails)
	b.out = b.out[:0]
	if !w.End.After(w.Start) {
		// It came with the window before it, which was placed by its
		// arrival (the first, or the first after a lost document): there
		// is no room for it. Its watts over no time would be no data.
		for _, sp := range b.spans {
			if w.End.After(sp.Start) {
				sp.crowded.add(fmt.Sprintf("%s %d: its %v window has no room", b.noun, s.Index, s.Window.Round(time.Millisecond)))
			}
		}
		return b.out
	}
	b.ledger.add(w)
	for _, sp := range b.spans {
		if tot, ok := sp.note(w, &b.ledger, b.interval, b.noun, &s); ok && sp.onWindow != nil {
			b.out = append(b.out, delivery{sp.onWindow, w, tot})
		}
	}
	return b.out
}

// refuse takes a reading the source refused: its window is lost.
func (b *book) refuse(r power.Refusal) {
	if b.first == nil {
		if r.Unmeasurable() {
			// The stream has nothing exopower can measure: say so now
			// rather than wait for samples that will never come.
			b.fatal = r
			return
		}
		if r.Cut() {
			return // the stream ended before its first sample
		}
	}
	b.placer.breakChain()
	if b.refused == nil {
		b.refused = map[string]int{}
	}
	b.refused[r.Reason()]++
	b.health.Refuse(r)
	for _, sp := range b.spans {
		sp.lost.add(r.Error())
		sp.health.Refuse(r)
	}
}

// plural is n of noun, an s added for more than one.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// breakOff takes a break in the stream (its source started again): the
// next window is placed by its arrival, and the time until it is neither
// bridged nor covered.
func (b *book) breakOff(be *power.BreakError) {
	b.placer.breakChain()
	b.ledger.live.breakOff(b.ledger.origin)
	b.breaks++
	for _, sp := range b.spans {
		sp.breaks.add(be.Error())
	}
}

// take or refuse one item of the stream; it reports false at the end.
func (b *book) next(s power.Sample, err error) ([]delivery, bool) {
	if err == nil {
		return b.take(s), true
	}
	var be *power.BreakError
	if errors.As(err, &be) {
		b.breakOff(be)
		return nil, true
	}
	if !power.EndsStream(err) {
		var r power.Refusal
		errors.As(err, &r)
		b.refuse(r)
		return nil, true
	}
	b.ended, b.endErr = true, err
	return nil, false
}

// open starts a span at start, which must not be earlier than the end of
// the newest window. onWindow, when not nil, is handed every window that
// reaches into the span, with the span's totals after it.
func (b *book) open(start time.Time, onWindow func(Window, Totals)) *Span {
	sp := &Span{Start: start, onWindow: onWindow}
	b.spans = append(b.spans, sp)
	return sp
}

// close ends the span at end and says what was measured over it. extra
// warnings go before the ones about missing components.
func (b *book) close(sp *Span, end time.Time, extra ...string) Result {
	b.spans = slices.DeleteFunc(b.spans, func(x *Span) bool { return x == sp })
	return b.report(sp, end, extra...)
}

// report says what was measured over the span up to end, with its
// warnings, and leaves the span as it is.
func (b *book) report(sp *Span, end time.Time, extra ...string) Result {
	r, last, ok, quirks := sp.reading(&b.ledger, end)
	r.Source = b.source
	if b.first != nil {
		r.HWModel, r.OSBuild = b.first.HWModel, b.first.OSBuild
		r.ThermalPressure = b.last.ThermalPressure
	}
	if !ok {
		r.Warnings = append(r.Warnings, "the end of the span is older than the windows kept; measured up to the last window instead")
	}
	r.Warnings = append(r.Warnings, b.endWarnings(&r, end, last)...)
	if sp.lost.count > 0 {
		what := "their windows are interpolated from their neighbours"
		if b.recorded {
			what = "their windows are not in the recording's timeline"
		}
		r.Warnings = append(r.Warnings, sp.lost.warning(b.source, b.noun, what))
	}
	if sp.breaks.count > 0 {
		times := "once"
		if sp.breaks.count > 1 {
			times = fmt.Sprintf("%d times", sp.breaks.count)
		}
		r.Warnings = append(r.Warnings, sp.breaks.listed(b.source+" stopped and was started again "+times+
			"; the time until each new one's first window is not measured (coverage shows it)"))
	}
	if sp.dropped.count > 0 {
		r.Warnings = append(r.Warnings, sp.dropped.listed(fmt.Sprintf("%s could not be true and were dropped; the energy across each is taken from the %ss on either side",
			plural(sp.dropped.count, b.source+" "+b.noun), b.noun)))
	}
	if sp.crowded.count > 0 {
		r.Warnings = append(r.Warnings, sp.crowded.warning(b.source, b.noun, "they came in the same read as the one before them, which was placed by its arrival, and their windows have no room on the timeline: not counted"))
	}
	if sp.disagree > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s's combined_power disagreed with CPU + GPU + ANE in %d of the windows (by up to %.3g W); the total is the sum of the components", b.source, sp.disagree, sp.disagreeMax))
	}
	r.Warnings = append(r.Warnings, sp.long...)
	r.Warnings = append(r.Warnings, quirks.Warnings()...)
	r.Warnings = append(r.Warnings, extra...)
	r.Warnings = append(r.Warnings, b.notes...)
	if r.Samples > 0 {
		r.Warnings = append(r.Warnings, missingComponents(r.Has)...)
	}
	return r
}

// endWarnings say how the stream ended, and what of the span's end no
// window covered. last is the end of the last window in the span.
func (b *book) endWarnings(r *Result, end, last time.Time) []string {
	var ws []string
	if b.ended && b.endErr != nil && b.endErr != io.EOF {
		if b.recorded {
			ws = append(ws, fmt.Sprintf("the stream ended with an error: %v", b.endErr))
		} else {
			ws = append(ws, "the stream broke off: "+b.endErr.Error())
		}
	}
	if b.recorded || !last.Before(end) || !b.ended && last.IsZero() {
		return ws
	}
	missing := end.Sub(last)
	if last.IsZero() {
		missing = r.Duration
	}
	m := missing.Round(time.Millisecond)
	if b.ended {
		r.Ended = true
		return append(ws, fmt.Sprintf("%s stopped %v before the end: the last %v are not measured", b.source, m, m))
	}
	return append(ws, fmt.Sprintf("no window covered the last %v of the span in time: not measured", m))
}

// missingComponents warns of the parts of the SoC a stream did not report.
func missingComponents(has power.Reported) []string {
	var missing []string
	for _, c := range []struct {
		name string
		has  bool
	}{{"CPU", has.CPU}, {"GPU", has.GPU}, {"ANE", has.ANE}} {
		if !c.has {
			missing = append(missing, c.name)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("the stream has no %s power: counted as 0", strings.Join(missing, ", "))}
}
