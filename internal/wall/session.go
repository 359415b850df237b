package wall

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Session is a plug polled in the background over a command's run, a
// bench or a serve: Start opens it and polls it, Finish reads it once
// more after the span's end and answers the span, Close lets it go.
type Session struct {
	plug   Plug
	meter  *Meter
	cancel context.CancelFunc
	done   chan struct{}
	closed sync.Once
}

// Start opens the plug t with c, and polls it every DefaultInterval on
// the monotonic clock of time.Now, the clock of the Mac's own windows,
// until Finish or Close.
func Start(ctx context.Context, t Target, c Credentials) (*Session, error) {
	p, err := Open(ctx, t, c)
	if err != nil {
		return nil, err
	}
	pctx, cancel := context.WithCancel(context.Background())
	s := &Session{plug: p, meter: NewMeter(p, DefaultInterval, time.Now), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		s.meter.Run(pctx)
	}()
	return s, nil
}

// Mark asks for a reading now, without waiting for it: at the start of a
// span, so that the plug's counter is read within a round trip of it. A
// nil Session is none.
func (s *Session) Mark() {
	if s != nil {
		s.meter.PollSoon()
	}
}

// Info is what the plug is.
func (s *Session) Info() Info { return s.plug.Info() }

// Interval is how often the plug is polled.
func (s *Session) Interval() time.Duration { return s.meter.interval }

// Finish stops the polling, reads the plug once more, so that a reading
// after to holds the span's end, and answers [from, to]. The last read is
// bounded as every read is (DefaultTimeout): a plug that hangs holds the
// end by less than a second. The plug is closed.
func (s *Session) Finish(from, to time.Time) Span {
	s.stop()
	ctx, cancel := context.WithTimeout(context.Background(), DefaultTimeout)
	s.meter.Poll(ctx)
	cancel()
	s.closePlug()
	return s.meter.Energy(from, to)
}

// Span answers [from, to] while the polling goes on, for the spans of a
// bench or a serve: it asks for a reading now and waits for one taken
// after to, so that the span's end is held by a reading, as Finish's is;
// the wait is bounded as a read is, and a plug that does not answer
// leaves the end uncovered rather than holding the span's end up (nor
// waits at all while its newest read failed).
func (s *Session) Span(ctx context.Context, from, to time.Time) Span {
	s.WaitAfter(ctx, to)
	return s.meter.Energy(from, to)
}

// Read answers [from, to] with the readings so far, without waiting:
// an open span's reading.
func (s *Session) Read(from, to time.Time) Span { return s.meter.Energy(from, to) }

// Total is the plug's energy since the session started, a counter that
// only grows (Meter.Total).
func (s *Session) Total() Total { return s.meter.Total() }

// Latest is the plug's newest good reading and its time; ok is false
// before the first.
func (s *Session) Latest() (r Reading, at time.Time, ok bool) { return s.meter.Latest() }

// PowerNow is the plug's newest power reading while it is fresh, no
// older than 5 s and two intervals (the bound after which the Mac's own
// power gauges are taken as stale too); ok is false otherwise.
func (s *Session) PowerNow() (watts float64, ok bool) {
	r, at, ok := s.meter.Latest()
	if !ok || !r.HasPower || s.meter.now().Sub(at) > 5*time.Second+2*s.meter.interval {
		return 0, false
	}
	return r.Power, true
}

// Stats are the session's polls so far.
func (s *Session) Stats() Stats { return s.meter.Stats() }

// Close stops the polling and closes the plug; for the paths that end
// without a span. A nil Session is none.
func (s *Session) Close() {
	if s == nil {
		return
	}
	s.stop()
	s.closePlug()
}

func (s *Session) closePlug() { s.closed.Do(func() { s.plug.Close() }) }

func (s *Session) stop() {
	s.cancel()
	<-s.done
}

// ReadCredentials reads a plug's credentials from r, lines of "user
// NAME", "password SECRET" or "token SECRET" (blank lines and lines that
// begin with # are skipped), and, where r is nil, from getenv's
// EXOPOWER_WALL_USER, EXOPOWER_WALL_PASSWORD and EXOPOWER_WALL_TOKEN. An
// error names the line, never what it holds.
func ReadCredentials(r io.Reader, getenv func(string) string) (Credentials, error) {
	if r == nil {
		return Credentials{User: getenv("EXOPOWER_WALL_USER"), Password: getenv("EXOPOWER_WALL_PASSWORD"), Token: getenv("EXOPOWER_WALL_TOKEN")}, nil
	}
	var c Credentials
	sc := bufio.NewScanner(io.LimitReader(r, 64<<10))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, value, _ := strings.Cut(line, " ")
		value = strings.TrimSpace(value)
		field := map[string]*string{"user": &c.User, "password": &c.Password, "token": &c.Token}[key]
		if field == nil || value == "" {
			return Credentials{}, fmt.Errorf("line %d: want user NAME, password SECRET or token SECRET", n)
		}
		*field = value
	}
	return c, sc.Err()
}
