package fakellm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/exopower/exopower/internal/fakepm"
)

// queue hands out slots, one request per slot, in the order requests
// arrive, as a server with one slot does.
type queue struct {
	c Config
	// last is the index of the last slot taken; taken says whether there
	// is one.
	last  int64
	taken bool
	// free is when the request served last is done, in Unix nanoseconds
	// (Config.Continuous).
	free int64
}

// take gives a request of n pieces that arrives now the first slot that starts at
// least Lead from now and is not taken, and appends its phases to the
// overrides file before it starts. The caller holds the server's lock, so
// that slots are taken in the order of arrival and the file's lines in
// the order of slots.
func (q *queue) take(now time.Time, n int) (time.Time, error) {
	period := int64(q.c.Period)
	earliest := now.UnixNano() + int64(q.c.lead())
	if q.c.Continuous {
		start := max(earliest, q.free)
		if err := q.appendOverrides(start, n); err != nil {
			return time.Time{}, err
		}
		q.free = start + int64(q.c.Prefill+q.c.decode(n))
		return time.Unix(0, start), nil
	}
	k := earliest / period
	if k*period < earliest {
		k++
	}
	if q.taken && k <= q.last {
		k = q.last + 1
	}
	start := k * period
	if err := q.appendOverrides(start, n); err != nil {
		return time.Time{}, err
	}
	q.last, q.taken = k, true
	return time.Unix(0, start), nil
}

// decode is how long the decode of n pieces takes: Decode, from the
// first piece to the last, or none for a single piece, which ends the
// work with the prefill.
func (c Config) decode(n int) time.Duration {
	if n <= 1 {
		return 0
	}
	return c.Decode
}

// appendOverrides appends the prefill and decode of n pieces in the slot
// that starts at start, in Unix nanoseconds, to the overrides file. Both
// lines go in one write on a file opened to append, so that the lines of
// servers sharing the file never interleave.
func (q *queue) appendOverrides(start int64, n int) error {
	if q.c.Overrides == "" {
		return nil
	}
	mid, end := start+int64(q.c.Prefill), start+int64(q.c.Prefill+q.c.decode(n))
	lines := fakepm.Override{From: start, To: mid, W: q.c.PrefillWatts}.String() + "\n" +
		fakepm.Override{From: mid, To: end, W: q.c.DecodeWatts}.String() + "\n"
	f, err := os.OpenFile(q.c.Overrides, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("overrides: %w", err)
	}
	_, err = f.Write([]byte(lines))
	if err = errors.Join(err, f.Close()); err != nil {
		return fmt.Errorf("overrides: %w", err)
	}
	return nil
}

// tokenTimes returns when each of n pieces is sent in the slot that
// starts at start: the first at the end of the prefill, the last at the
// end of the decode, the others evenly between.
func (c Config) tokenTimes(start time.Time, n int) []time.Time {
	first := start.Add(c.Prefill)
	times := make([]time.Time, n)
	for i := range times {
		if n == 1 {
			times[i] = first
			break
		}
		times[i] = first.Add(c.Decode * time.Duration(i) / time.Duration(n-1))
	}
	return times
}

// waitUntil waits for t on the wall clock, as the schedule is set on it.
// It reports false if ctx ends first.
func waitUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}
