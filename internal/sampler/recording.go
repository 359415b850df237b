package sampler

import (
	"fmt"
	"io"
	"time"

	"github.com/exopower/exopower/internal/power"
)

// Recording measures a recorded stream from its first window to its last,
// through the same accounts as a live stream. A recording has no arrival
// times: src must stamp each sample's Arrival at the end of its window, as
// powermetrics.NewRecording does; source names it in results and
// warnings. Recording reads src to its end; stopping it is the caller's.
func Recording(src Source, source string) (Result, error) { return RecordingWindows(src, source, nil) }

// RecordingWindows is Recording that also hands every window of the
// recording to onWindow, when not nil, with the totals after it, as
// Sampler.Begin does for a live span.
func RecordingWindows(src Source, source string, onWindow func(Window, Totals)) (Result, error) {
	b := book{source: source, noun: readingName(src), recorded: true}
	var sp *Span
	var back []string
	var prev time.Time
	var firstLost error
	var early notes // documents refused before the first usable one
	var earlyHealth power.Health
	var lengths windowLengths // for the warnings of long windows
	for more := true; more; {
		s, err := src.Next()
		if err == nil {
			if sp == nil {
				sp = b.open(s.Arrival.Add(-s.Window), onWindow)
				sp.lost, sp.health = early, earlyHealth
			}
			if !prev.IsZero() && s.Timestamp.Before(prev.Add(-time.Second)) && len(back) < maxNotes {
				// Timestamps have whole seconds, but they do not go back:
				// two recordings in one file, or a file joined to itself.
				back = append(back, fmt.Sprintf("%s %d is timestamped %v, before the %s ahead of it (%v): the file may hold more than one recording",
					b.noun, s.Index, s.Timestamp.UTC().Format(time.RFC3339), b.noun, prev.UTC().Format(time.RFC3339)))
			}
			prev = s.Timestamp
			lengths.add(s.Index, s.Window)
		} else if sp == nil && !power.EndsStream(err) {
			if firstLost == nil {
				firstLost = err
			}
			early.add(err.Error())
			earlyHealth.Refuse(err)
		}
		var out []delivery
		out, more = b.next(s, err)
		for _, d := range out {
			d.f(d.w, d.tot)
		}
		if b.fatal != nil {
			return Result{}, b.fatal
		}
	}
	if sp == nil {
		switch {
		case b.endErr != io.EOF:
			return Result{}, b.endErr
		case firstLost != nil:
			return Result{}, fmt.Errorf("no usable %s: %w", b.noun, firstLost)
		}
		return Result{}, fmt.Errorf("no %s in the stream", b.noun)
	}
	return b.close(sp, b.placer.end, append(back, longWindows(b.noun, &lengths)...)...), nil
}
