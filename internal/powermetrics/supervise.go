package powermetrics

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/exopower/exopower/internal/power"
)

// Backoff bounds the waits between restarts: the first after a second,
// each next one twice as long, up to half a minute.
const (
	minBackoff = time.Second
	maxBackoff = 30 * time.Second
)

// MinRequestGap is the least time between two sample requests to one
// powermetrics, however many callers ask: each request ends a window, and
// a window shorter than this measures nothing better.
const MinRequestGap = 20 * time.Millisecond

// Sample requests beyond the periodic windows are budgeted: a burst of
// RequestBurst at once (a bench run's edges, a few spans, each its own
// reading), then RequestsPerInterval an interval for as long as clients
// keep asking, so that spans opened and ended in a loop cost powermetrics
// at most three times the windows the interval asks for, not one every
// MinRequestGap. A request beyond the budget waits for it; the span it is
// for ends at that window or at the next periodic one.
const (
	RequestBurst        = 10
	RequestsPerInterval = 2
)

// Supervisor is a powermetrics that is started again whenever it dies,
// for as long as exopower serves: one stream with breaks in it (each a
// *power.BreakError from Next) rather than a stream that ends.
type Supervisor struct {
	opts    LaunchOptions
	stopped chan struct{}
	stop    sync.Once
	sleep   func(ctx context.Context, d time.Duration) bool

	mu          sync.Mutex
	cur         *Process
	restarts    int
	lastRequest time.Time
	tokens      float64   // sample requests that may go now: see RequestBurst
	tokensAt    time.Time // when tokens was last brought up to date
	lastErr     error     // the last failure to start it again, for status pages
	done        bool      // Stop was called
	deferred    bool      // a request waits for the end of the gap
}

// Supervise takes over p, started with opts, and starts powermetrics again
// with opts whenever it ends.
func Supervise(p *Process, opts LaunchOptions) *Supervisor {
	return &Supervisor{opts: opts, cur: p, stopped: make(chan struct{}), sleep: sleepCtx, tokens: RequestBurst}
}

// silence is how long a running powermetrics may go without a sample
// before it is taken for hung, stopped and started again: as long as
// Launch waits for the first one. A Mac asleep does not count: Go's
// timers stand still while it sleeps.
func (s *Supervisor) silence() time.Duration {
	if s.opts.ReadyTimeout > 0 {
		return s.opts.ReadyTimeout
	}
	return 5*time.Second + 2*s.opts.Interval
}

// Next returns the next sample. When powermetrics ends, Next starts it
// again, waiting between tries from one second, doubled each time, up to
// 30 s, and returns a *power.BreakError once the new one gave its first sample.
// After Stop it returns io.EOF.
func (s *Supervisor) Next() (power.Sample, error) {
	s.mu.Lock()
	cur := s.cur
	s.mu.Unlock()
	// A powermetrics alive and silent would hold the stream forever, and
	// serve's gauges at their last value: past the silence it is stopped,
	// which ends Next, and started again as if it had died.
	var hung atomic.Bool
	watchdog := time.AfterFunc(s.silence(), func() {
		hung.Store(true)
		cur.Stop()
	})
	smp, err := cur.Next()
	watchdog.Stop()
	if !EndsStream(err) {
		return smp, err
	}
	how := cur.Stop()
	if hung.Load() {
		how = fmt.Errorf("powermetrics gave no sample for %v, though it was running: stopped", s.silence())
	} else if how == nil {
		how = err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-s.stopped:
			cancel()
		case <-ctx.Done():
		}
	}()
	for wait := minBackoff; ; wait = min(2*wait, maxBackoff) {
		if !s.sleep(ctx, wait) {
			return power.Sample{}, io.EOF
		}
		p, err := Launch(ctx, s.opts)
		s.mu.Lock()
		if s.done {
			// Stopped while it started: Stop saw the old one only.
			s.mu.Unlock()
			if p != nil {
				p.Stop()
			}
			return power.Sample{}, io.EOF
		}
		if err != nil {
			s.lastErr = err
			s.mu.Unlock()
			continue
		}
		s.cur, s.lastErr = p, nil
		s.restarts++
		s.mu.Unlock()
		return power.Sample{}, &power.BreakError{Source: "powermetrics", Err: how}
	}
}

// Restarts is how many times powermetrics was started again, and the
// last failure to start it, if the last try failed.
func (s *Supervisor) Restarts() (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.restarts, s.lastErr
}

// CanRequestSample says whether the running powermetrics takes requests.
func (s *Supervisor) CanRequestSample() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur.CanRequestSample()
}

// RequestSample asks for a sample now or, when one was asked for less
// than MinRequestGap ago or the budget of requests is spent (see
// RequestBurst), once it may: one request, however many callers asked
// meanwhile, and none of them left waiting for the next periodic window
// longer than the budget says.
func (s *Supervisor) RequestSample() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	wait := s.refill(now)
	if !s.lastRequest.IsZero() {
		wait = max(wait, MinRequestGap-now.Sub(s.lastRequest))
	}
	if wait <= 0 {
		s.take(now)
		return s.cur.RequestSample()
	}
	if !s.deferred {
		s.deferred = true
		time.AfterFunc(wait, func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.deferred = false
			if !s.done {
				now := time.Now()
				s.refill(now)
				s.take(now)
				s.cur.RequestSample()
			}
		})
	}
	return nil
}

// refill brings the budget of requests up to now, and says how long until
// one may go.
func (s *Supervisor) refill(now time.Time) time.Duration {
	perSecond := RequestsPerInterval / s.opts.Interval.Seconds()
	if !s.tokensAt.IsZero() {
		s.tokens = min(RequestBurst, s.tokens+now.Sub(s.tokensAt).Seconds()*perSecond)
	}
	s.tokensAt = now
	if s.tokens >= 1 {
		return 0
	}
	return time.Duration((1 - s.tokens) / perSecond * float64(time.Second))
}

func (s *Supervisor) take(now time.Time) {
	s.lastRequest = now
	s.tokens--
}

// Stop stops powermetrics for good, and any start in progress.
func (s *Supervisor) Stop() error {
	s.stop.Do(func() { close(s.stopped) })
	s.mu.Lock()
	s.done = true
	cur := s.cur
	s.mu.Unlock()
	return cur.Stop()
}

// sleepCtx waits d, or until ctx ends; it reports whether d passed.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
