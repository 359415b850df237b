package output

import (
	"fmt"
	"io"
	"time"

	"github.com/exopower/exopower/internal/sampler"
	"github.com/exopower/exopower/internal/wire"
)

// SampleWriter writes the rows of a span's windows as they come, in
// memory that does not grow with their number: the same rows, byte for
// byte, as WindowLog.Rows gives once the span is closed.
//
// A row depends on the span's end only for the last windows: the last
// one counts up to the end, and windows that start at or after it are
// left out. The end is where the last window ends, unless a clock that
// went back placed it earlier; so the newest heldRows windows are held
// until Close, and only older ones written as they come. Should the end
// lie before a window already written, Close says so in the result's
// warnings.
type SampleWriter struct {
	enc     *rowEncoder // the header, before the pipe starts
	pipe    rowPipe
	started bool // the first window came, and the header went out
	m       rowMaker
	held    []heldRow // a ring: the oldest at next once it is full
	next    int
	// What the rows written so far took of the end: that it is no
	// earlier than mustEnd, and after mustPass (the start of the window
	// after the last one written).
	mustEnd, mustPass time.Time
}

// heldRows is how many of the newest windows wait for the span's end:
// as many as the ledger keeps to read the energy at an instant before
// the newest window (100 s at 100 ms).
const heldRows = 1024

type heldRow struct {
	w   sampler.Window
	tot sampler.Totals
	src wire.Source
}

// NewSampleWriter writes rows to w in format f.
func NewSampleWriter(w io.Writer, f SamplesFormat) *SampleWriter {
	enc := newRowEncoder(w, f)
	return &SampleWriter{enc: enc, pipe: rowPipe{enc: enc}, held: make([]heldRow, 0, heldRows)}
}

// Add takes window w of a span from src, with the span's totals after it
// (a span's onWindow). Once writing failed, it keeps nothing.
func (sw *SampleWriter) Add(src wire.Source, w sampler.Window, tot sampler.Totals) {
	if sw.Err() != nil {
		return
	}
	if !sw.started {
		sw.started = true
		sw.m = newRowMaker(w.End.Add(-tot.Elapsed))
		sw.enc.header()
	}
	if len(sw.held) < heldRows {
		sw.held = append(sw.held, heldRow{w, tot, src})
		return
	}
	old := &sw.held[sw.next]
	r := sw.m.row(old.w, old.tot.Energy, old.w.End, old.src)
	sw.pipe.write(&r)
	sw.mustEnd = maxTime(sw.mustEnd, old.w.End)
	*old = heldRow{w, tot, src}
	sw.next = (sw.next + 1) % heldRows
	sw.mustPass = maxTime(sw.mustPass, sw.held[sw.next].w.Start)
}

// Err is the first error writing the rows, if any.
func (sw *SampleWriter) Err() error {
	if sw.pipe.todo == nil {
		return sw.enc.err // the header's, before the pipe started
	}
	return sw.pipe.failed()
}

// Close writes the rows of the windows held, for the span that res
// measured, and what is buffered, and says the first error writing.
func (sw *SampleWriter) Close(res *sampler.Result) error {
	if !sw.started {
		sw.enc.header()
	}
	end := res.Start.Add(res.Duration)
	if !sw.mustEnd.IsZero() && (end.Before(sw.mustEnd) || !sw.mustPass.Before(end)) {
		res.Warnings = append(res.Warnings, fmt.Sprintf("the span ends at %.3f s, before the windows whose rows were already written had ended: they are counted whole in the rows, not in the summary",
			end.Sub(sw.m.start).Seconds()))
	}
	n := len(sw.held)
	for k := range n {
		h := &sw.held[(sw.next+k)%n]
		if !h.w.Start.Before(end) {
			break
		}
		after := h.tot.Energy
		if k == n-1 || !sw.held[(sw.next+k+1)%n].w.Start.Before(end) {
			after = res.Energy // the last window's part stops at the end
		}
		r := sw.m.row(h.w, after, end, h.src)
		sw.pipe.write(&r)
	}
	sw.held = sw.held[:0]
	return sw.pipe.close()
}
