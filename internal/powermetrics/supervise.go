package powermetrics

import (
	"context"
	"io"
	"sync"
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
	lastErr     error // the last failure to start it again, for status pages
	done        bool  // Stop was called
	deferred    bool  // a request waits for the end of the gap
}

// Supervise takes over p, started with opts, and starts powermetrics again
// with opts whenever it ends.
func Supervise(p *Process, opts LaunchOptions) *Supervisor {
	return &Supervisor{opts: opts, cur: p, stopped: make(chan struct{}), sleep: sleepCtx}
}

// Next returns the next sample. When powermetrics ends, Next starts it
// again, waiting between tries from one second, doubled each time, up to
// 30 s, and returns a *power.BreakError once the new one gave its first sample.
// After Stop it returns io.EOF.
func (s *Supervisor) Next() (power.Sample, error) {
	s.mu.Lock()
	cur := s.cur
	s.mu.Unlock()
	smp, err := cur.Next()
	if !EndsStream(err) {
		return smp, err
	}
	how := cur.Stop()
	if how == nil {
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
// than MinRequestGap ago, once the gap is over: one request, however many
// callers asked within the gap, and none of them left waiting for the
// next periodic window.
func (s *Supervisor) RequestSample() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	since := time.Since(s.lastRequest)
	if s.lastRequest.IsZero() || since >= MinRequestGap {
		s.lastRequest = time.Now()
		return s.cur.RequestSample()
	}
	if !s.deferred {
		s.deferred = true
		time.AfterFunc(MinRequestGap-since, func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.deferred = false
			if !s.done {
				s.lastRequest = time.Now()
				s.cur.RequestSample()
			}
		})
	}
	return nil
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
