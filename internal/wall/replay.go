package wall

import (
	"context"
	"time"
)

// Timed is a plug's good reading and when it was taken, on the
// timeline of the Mac's readings: what record --wall writes, and what a
// recording gives back.
type Timed struct {
	At time.Time
	Reading
}

// Since is the meter's good readings taken after t, oldest first.
func (m *Meter) Since(t time.Time) []Timed {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Timed
	for i := len(m.polls) - 1; i >= 0 && m.polls[i].at.After(t); i-- {
		if m.polls[i].ok {
			out = append(out, Timed{m.polls[i].at, m.polls[i].r})
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// Since is the session's good readings taken after t (Meter.Since).
func (s *Session) Since(t time.Time) []Timed { return s.meter.Since(t) }

// WaitAfter asks for a reading now and waits, as long as a read may
// take, for one taken after t: so that the end of a span or a recording
// is held by a reading. While the plug's newest read failed, it does not
// wait.
func (s *Session) WaitAfter(ctx context.Context, t time.Time) {
	s.meter.PollSoon()
	if s.meter.failing() {
		// A plug that did not answer its last read will not answer
		// this one sooner: a bench's every run would wait for it.
		return
	}
	ctx, cancel := context.WithTimeout(ctx, s.meter.interval+DefaultTimeout)
	defer cancel()
	s.meter.After(ctx, t)
}

// Replay is a meter over readings taken before, in their order (a
// recording's), of a plug that was info, polled every interval: its
// Energy over a span is what a live meter's was. A reading that cannot
// be true is kept as a failed poll, as a live one would have been; one
// not after the one before it is left out. None is let go however old:
// a recording of days is measured whole.
func Replay(info Info, interval time.Duration, readings []Timed) *Meter {
	m := NewMeter(replayed{info}, interval, nil)
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range readings {
		if n := len(m.polls); n > 0 && !r.At.After(m.polls[n-1].at) {
			continue // out of order: a meter's polls are in time's
		}
		err := check(r.Reading)
		m.keep(poll{at: r.At, r: r.Reading, ok: err == nil}, err)
	}
	return m
}

// replayed is the plug of a recording: its info alone.
type replayed struct{ info Info }

func (p replayed) Info() Info                            { return p.info }
func (p replayed) Read(context.Context) (Reading, error) { return Reading{}, ErrClosed }
func (p replayed) Close() error                          { return nil }

// failing says whether the meter's newest poll failed.
func (m *Meter) failing() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.polls) > 0 && !m.polls[len(m.polls)-1].ok
}
