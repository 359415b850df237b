package powermetrics

import (
	"errors"
	"io"
	"time"

	"github.com/exopower/exopower/internal/power"
)

// Reader is a stream that exopower did not start: a pipe from a
// powermetrics of the user's, or a recording. It takes no sample requests.
type Reader struct {
	r        io.Reader
	dec      *Decoder
	recorded bool
	end      time.Time // the end of the last window of a recording
}

// NewReader reads a live stream from r, each sample stamped with the time
// of its arrival by now (a monotonic clock).
func NewReader(r io.Reader, now func() time.Time) *Reader {
	return &Reader{r: r, dec: NewDecoder(r, now)}
}

// NewRecording reads a recorded stream from r. A recording has no arrival
// times, so each sample arrives, as far as exopower can tell, at the end
// of its window: the windows follow each other by their lengths
// (elapsed_ns) from the first document's timestamp, taken as the start of
// its window (whole seconds; powermetrics does not say whether it marks a
// window's start or end). A refused document's window is not on that
// timeline, since its length is unknown.
func NewRecording(r io.Reader) *Reader {
	return &Reader{r: r, dec: NewDecoder(r, time.Now), recorded: true}
}

// Next returns the next sample, as Decoder.Next does.
func (r *Reader) Next() (power.Sample, error) {
	s, err := r.dec.Next()
	if err == nil && r.recorded {
		if r.end.IsZero() {
			r.end = s.Timestamp
		}
		r.end = r.end.Add(s.Window)
		s.Arrival = r.end
	}
	return s, err
}

// CanRequestSample is false: a stream that exopower did not start cannot
// be asked for a sample.
func (r *Reader) CanRequestSample() bool { return false }

// RequestSample fails: see CanRequestSample.
func (r *Reader) RequestSample() error { return errors.ErrUnsupported }

// Stop closes the reader when it can be closed, which ends a read in
// progress on a pipe or a non-blocking descriptor.
func (r *Reader) Stop() error {
	if c, ok := r.r.(io.Closer); ok {
		c.Close()
	}
	return nil
}
