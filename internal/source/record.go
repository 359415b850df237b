package source

import (
	"context"
	"io"
	"time"

	"github.com/exopower/exopower/internal/ioreport"
)

// OpenIOReport opens IOReport and the SMC; a test gives a fake of them,
// which lets --source ioreport run on Linux.
type OpenIOReport = func() (ioreport.Library, error)

// Recorder reads IOReport and the SMC for a recording (exopower record),
// which Recording reads back.
type Recorder struct{ lib ioreport.Library }

// OpenRecorder opens IOReport and the SMC with open (nil: the real
// ones).
func OpenRecorder(open OpenIOReport) (*Recorder, error) {
	lib, err := Options{IOReport: open}.open()
	if err != nil {
		return nil, err
	}
	return &Recorder{lib}, nil
}

// Record writes a reading every interval to w as it is read, until n
// readings (0: no limit) or ctx ends, and returns how many it wrote;
// extra, when not nil, adds a plug's readings.
func (r *Recorder) Record(ctx context.Context, interval time.Duration, n int, w io.Writer, extra *ioreport.Extra) (int, error) {
	return ioreport.Record(ctx, r.lib, interval, n, w, extra)
}

// Close closes IOReport and the SMC.
func (r *Recorder) Close() error { return r.lib.Close() }
