package sampler

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/exopower/exopower/internal/powermetrics"
)

// Recording measures a recorded stream from its first window to its last.
// A file has no arrival times, so its windows follow each other by their
// lengths (elapsed_ns), from the start of the first window, which is taken
// to be the first document's timestamp (whole seconds; powermetrics does
// not say whether it marks its window's start or end). next returns the
// stream's samples as powermetrics.Decoder.Next does.
func Recording(next func() (powermetrics.Sample, error)) (Result, error) {
	var (
		end   time.Time
		l     ledger
		p     placer
		r     Result
		first = true
		lost  []string
		nLost int
		prev  time.Time
		back  []string
	)
	for {
		s, err := next()
		var de *powermetrics.DocumentError
		switch {
		case err == io.EOF:
			return recordingResult(r, l, end, lost, nLost, back)
		case errors.As(err, &de) && !errors.Is(err, powermetrics.ErrTooLarge):
			if first && (errors.Is(err, powermetrics.ErrNoPowerData) || errors.Is(err, powermetrics.ErrIntel)) {
				return r, err
			}
			nLost++
			if len(lost) < maxLost {
				lost = append(lost, de.Error())
			}
			continue
		case err != nil:
			if first {
				return r, err
			}
			r.Warnings = append(r.Warnings, fmt.Sprintf("the stream ended with an error: %v", err))
			return recordingResult(r, l, end, lost, nLost, back)
		}
		if first {
			r.HWModel, r.OSBuild = s.HWModel, s.OSBuild
			l.origin, end = s.Timestamp, s.Timestamp
			first = false
		}
		if !prev.IsZero() && s.Timestamp.Before(prev.Add(-time.Second)) && len(back) < maxLost {
			// Timestamps have whole seconds, but they do not go back:
			// two recordings in one file, or a file joined to itself.
			back = append(back, fmt.Sprintf("document %d is timestamped %v, before the document ahead of it (%v): the file may hold more than one recording",
				s.Index, s.Timestamp.UTC().Format(time.RFC3339), prev.UTC().Format(time.RFC3339)))
		}
		prev = s.Timestamp
		r.ThermalPressure = s.ThermalPressure
		r.Has.CPU, r.Has.GPU, r.Has.ANE = r.Has.CPU || s.Has.CPU, r.Has.GPU || s.Has.GPU, r.Has.ANE || s.Has.ANE
		// Each window ends where the one before ended, plus its length:
		// a lost document's window is simply not on the timeline.
		end = end.Add(s.Window)
		s.Arrival = end
		l.add(p.place(s))
	}
}

func recordingResult(r Result, l ledger, end time.Time, lost []string, nLost int, back []string) (Result, error) {
	if l.n == 0 {
		if nLost > 0 {
			return r, fmt.Errorf("no usable document: %s", lost[0])
		}
		return r, errors.New("no document in the stream")
	}
	t := l.live
	r.Start = l.origin
	r.Duration = end.Sub(l.origin)
	r.Energy, r.Peak, r.Samples = t.energy(), t.peak, t.samples
	r.Average = r.Energy.Scale(1 / r.Duration.Seconds())
	r.Coverage = 1
	if nLost > 0 {
		r.Warnings = append(r.Warnings, lostWarning(nLost, lost, "their windows are not in the recording's timeline"))
	}
	r.Warnings = append(r.Warnings, back...)
	r.Warnings = append(r.Warnings, missingComponents(r.Has)...)
	return r, nil
}
