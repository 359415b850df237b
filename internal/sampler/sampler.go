// Package sampler measures spans of a stream of a source's readings
// (power.Sample): powermetrics's, today.
//
// A Sampler owns a live stream: one goroutine reads it, places every
// window on one monotonic timeline and puts it on the stream's ledger of
// energy, E(t) per component. Every reading is taken from that ledger: a
// span is E(end) - E(start), with its coverage and peak, and any number of
// spans may be open at once. Windows that straddle a span's edges count
// only for their part inside, and the stretch after the last window is
// measured by waiting for the window that covers it (asking the source
// for it at once where that is possible), never extrapolated. What could
// not be measured shows in the result's coverage and warnings. Recording
// puts a recorded stream through the same accounts.
package sampler

import (
	"context"
	"fmt"
	"io"
	"maps"
	"sync"
	"time"

	"github.com/exopower/exopower/internal/power"
)

// Source is a stream of samples, such as a running powermetrics.
type Source interface {
	// Next returns the next sample, a power.Refusal for a refused one
	// (the stream goes on unless it Ends it), a *power.BreakError when
	// the stream broke off and began again, or another error at its end.
	Next() (power.Sample, error)
	// CanRequestSample says whether RequestSample can work.
	CanRequestSample() bool
	// RequestSample asks for a sample now.
	RequestSample() error
	// Stop ends the stream and says how it ended.
	Stop() error
}

// Naming is a Source that names its readings in messages; without it
// they are documents, as powermetrics's are.
type Naming interface{ ReadingName() string }

// readingName is what src calls a reading.
func readingName(src Source) string {
	if n, ok := src.(Naming); ok {
		return n.ReadingName()
	}
	return "document"
}

// Config tunes a Sampler.
type Config struct {
	// Source names the source in messages, such as powermetrics.
	Source string
	// Notes are what the source says of itself (channels it left out),
	// added to every result's warnings.
	Notes []string
	// Interval is the sample interval the source was given.
	Interval time.Duration
	// Now is the monotonic clock that stamped the samples' arrivals;
	// time.Now when nil.
	Now func() time.Time
	// ReadyTimeout bounds the wait for the first sample; 5 s plus two
	// intervals when zero.
	ReadyTimeout time.Duration
	// Grace is added to one interval when waiting for a window; half an
	// interval plus 250 ms when zero (real windows run a few percent
	// longer than the interval, and the pipe adds its delay).
	Grace time.Duration
	// FromPipe says that the stream comes through a pipe that exopower
	// did not start, which may carry a recording played at once rather
	// than a live stream. Ready then watches the pace of the first
	// documents, and refuses a stream that comes far faster than its
	// windows with a *PlaybackError.
	FromPipe bool
	// Began is when exopower started, on the clock of Now, if known: the
	// first documents of a live stream can come at once if they waited
	// in the pipe while exopower started, and the time since tells such a
	// backlog from a recording (see pace).
	Began time.Time
}

// Sampler reads a Source and measures spans of its timeline.
type Sampler struct {
	src Source
	cfg Config

	mu      sync.Mutex
	changed chan struct{} // closed and replaced when the book changes and someone waits
	waiting int           // goroutines in wait
	book    book
	done    chan struct{}
}

// Start starts reading src. Stop must be called to end it.
func Start(src Source, cfg Config) *Sampler {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Source == "" {
		cfg.Source = "the source"
	}
	if cfg.ReadyTimeout == 0 {
		cfg.ReadyTimeout = 5*time.Second + 2*cfg.Interval
	}
	if cfg.Grace == 0 {
		cfg.Grace = cfg.Interval/2 + 250*time.Millisecond
	}
	s := &Sampler{src: src, cfg: cfg, changed: make(chan struct{}), done: make(chan struct{}),
		book: book{source: cfg.Source, noun: readingName(src), notes: cfg.Notes, interval: cfg.Interval, pace: pace{on: cfg.FromPipe, began: cfg.Began}}}
	go s.loop()
	return s
}

func (s *Sampler) loop() {
	defer close(s.done)
	for more := true; more; {
		smp, err := s.src.Next()
		s.mu.Lock()
		var out []delivery
		out, more = s.book.next(smp, err)
		s.notify()
		s.mu.Unlock()
		for _, d := range out {
			d.f(d.w, d.tot)
		}
	}
}

// notify wakes every waiter; s.mu must be held. With nobody waiting, as
// for most samples, there is nothing to wake and nothing to allocate.
func (s *Sampler) notify() {
	if s.waiting == 0 {
		return
	}
	close(s.changed)
	s.changed = make(chan struct{})
}

// wait blocks until cond holds (called with s.mu held), the deadline
// passes or ctx ends. It reports whether cond held. s.mu is held on return.
func (s *Sampler) wait(ctx context.Context, deadline time.Time, cond func() bool) bool {
	var timer <-chan time.Time
	if !deadline.IsZero() {
		t := time.NewTimer(deadline.Sub(s.cfg.Now()))
		defer t.Stop()
		timer = t.C
	}
	s.waiting++
	defer func() { s.waiting-- }()
	for !cond() {
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ch:
			s.mu.Lock()
		case <-timer:
			s.mu.Lock()
			return cond()
		case <-ctx.Done():
			s.mu.Lock()
			return cond()
		}
	}
	return true
}

// StreamEndedError says the stream ended before its first sample.
type StreamEndedError struct {
	Source string
	Err    error
}

func (e *StreamEndedError) Error() string {
	if e.Err == nil || e.Err == io.EOF {
		return e.Source + " ended before its first sample"
	}
	return fmt.Sprintf("%s ended before its first sample: %v", e.Source, e.Err)
}

func (e *StreamEndedError) Unwrap() error { return e.Err }

// Ready waits for the first sample, proof that the stream runs and
// measures. It fails when the stream ends first or cannot be measured, or
// after Config.ReadyTimeout. For a stream from a pipe it then waits to
// see whether the stream is live (see Config.FromPipe).
func (s *Sampler) Ready(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := &s.book
	s.wait(ctx, s.cfg.Now().Add(s.cfg.ReadyTimeout), func() bool {
		return b.first != nil || b.fatal != nil || b.ended
	})
	if b.pace.on && b.first != nil && b.fatal == nil {
		s.wait(ctx, b.pace.deadline(), func() bool { return b.pace.settled || b.fatal != nil || b.ended })
		// Documents that come at once from now on are a hiccup of a live
		// stream: a recording would have come by now.
		b.pace.settled = true
	}
	switch {
	case b.fatal != nil:
		return b.fatal
	case ctx.Err() != nil:
		return ctx.Err()
	case b.first != nil:
		return nil
	case b.ended:
		return &StreamEndedError{Source: s.cfg.Source, Err: b.endErr}
	}
	return &power.NoSampleError{Source: s.cfg.Source, Waited: s.cfg.ReadyTimeout}
}

// Begin opens a span and returns it; its Start is t = 0. Where the source
// takes requests it first asks for a sample and waits (at most an interval
// and the grace) for it, so that a window ends just before t = 0 and the
// next one starts there. onWindow, when not nil, is called from the
// Sampler's goroutine with every window that reaches into the span and
// the span's totals after it; it must not call the Sampler.
func (s *Sampler) Begin(ctx context.Context, onWindow func(Window, Totals)) *Span {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cut(ctx, true)
	return s.book.open(s.cfg.Now(), onWindow)
}

// Cut asks the source for a sample now, where it takes requests, so
// that a window ends here: at an edge that something measured over the
// stream's windows, not over a span, needs (a request's first token).
// With wait, it waits for the sample as Begin does.
func (s *Sampler) Cut(ctx context.Context, wait bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cut(ctx, wait)
}

func (s *Sampler) cut(ctx context.Context, wait bool) {
	b := &s.book
	if !s.src.CanRequestSample() || b.ended {
		return
	}
	n := b.ledger.n
	if s.src.RequestSample() == nil && wait {
		s.wait(ctx, s.cfg.Now().Add(s.cfg.Interval+s.cfg.Grace), func() bool { return b.ledger.n > n || b.ended })
	}
}

// Result is what was measured over a span.
type Result struct {
	// Start is the start of the span (t = 0), on the monotonic clock.
	Start time.Time
	// Duration is the span's length.
	Duration time.Duration
	// Energy is in joules, per component.
	Energy power.Values
	// Average is Energy / Duration, in watts: the time-weighted mean.
	Average power.Values
	// Peak is the highest window average, in watts.
	Peak power.Values
	// Samples is the number of windows that overlap the span.
	Samples int
	// Coverage is the fraction of the span covered by measured windows:
	// 1 when all of it was measured.
	Coverage float64
	// Has says which components the stream reported.
	Has power.Reported
	// Source names the stream's source (Config.Source).
	Source string
	// HWModel, OSBuild and ThermalPressure come from the stream's
	// documents (the last thermal pressure seen).
	HWModel, OSBuild, ThermalPressure string
	// Health is what exopower refused to believe of each rail over the
	// span: windows refused, readings dropped as bogus, and how long a
	// counter stood still at most.
	Health power.Health
	// Warnings say what was estimated or left out, for people to read.
	Warnings []string
	// Ended reports that the stream ended before the span did.
	Ended bool
}

// End closes the span at end and returns what was measured over it.
// Unless the stream has ended, it waits for the window that covers end
// (asking for it at once where the source takes requests), at most one
// interval and the grace after end, or until ctx ends.
func (s *Sampler) End(ctx context.Context, sp *Span, end time.Time) Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := &s.book
	covered := func() bool { return b.ended || !b.placer.end.Before(end) }
	if !covered() && s.src.CanRequestSample() {
		s.src.RequestSample()
	}
	s.wait(ctx, end.Add(s.cfg.Interval+s.cfg.Grace), covered)
	return b.close(sp, end)
}

// Finish is End for the last span of a stream: it closes the span, stops
// the stream, and adds how the stream ended, when not cleanly, to the
// warnings.
func (s *Sampler) Finish(ctx context.Context, sp *Span, end time.Time) Result {
	res := s.End(ctx, sp, end)
	if err := s.Stop(); err != nil {
		res.Warnings = append(res.Warnings, s.cfg.Source+": "+err.Error())
	}
	return res
}

// Read returns what was measured over the span so far, from its start to
// the end of the newest window; the span stays open. Before any window
// reaches past its start, nothing was: the result is empty.
func (s *Sampler) Read(sp *Span) Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := &s.book
	end := b.ledger.live.end
	if !end.After(sp.Start) {
		return Result{Start: sp.Start, Source: s.cfg.Source}
	}
	return b.report(sp, end)
}

// StreamTotals is what a stream measured from its first window on.
type StreamTotals struct {
	// Energy is in joules, per component.
	Energy power.Values
	// Covered is the time that windows covered.
	Covered time.Duration
	// Windows counts the windows measured; Refused the documents that
	// could not be used, by Reason; Breaks the times the stream broke off
	// and began again.
	Windows int
	Refused map[string]int
	Breaks  int
	// Last is the newest window, and LastArrival when its document came
	// (zero before the first).
	Last        Window
	LastArrival time.Time
	// Source names the stream's source (Config.Source); HWModel and
	// OSBuild are what the first document names.
	Source, HWModel, OSBuild string
	// Has says which components the stream reported.
	Has power.Reported
	// Health is what exopower refused to believe of each rail since the
	// stream started; Stood, how long each rail's counter has stood still
	// now while the others moved (0 while it moves).
	Health power.Health
	Stood  [power.NumRails]time.Duration
}

// Totals returns what the stream measured so far. Energy and Covered only
// grow while the stream lives: they suit counters.
func (s *Sampler) Totals() StreamTotals {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := &s.book
	t := StreamTotals{
		Source:  s.cfg.Source,
		Has:     b.has,
		Energy:  b.ledger.live.energy(),
		Covered: b.ledger.live.covered,
		Windows: b.ledger.n,
		Breaks:  b.breaks,
		Refused: maps.Clone(b.refused),
		Health:  b.health,
	}
	for r, n := range b.last.Rails {
		if n.Quirks&(power.CounterStill|power.CounterFlat) != 0 {
			t.Stood[r] = n.Stood
		}
	}
	if b.ledger.n > 0 {
		t.Last = b.ledger.ring[(b.ledger.n-1)%ringSize].w
		t.LastArrival = b.last.Arrival
	}
	if b.first != nil {
		t.HWModel, t.OSBuild = b.first.HWModel, b.first.OSBuild
	}
	return t
}

// Done is closed when the stream has ended and the Sampler's goroutine
// has handed over its last window.
func (s *Sampler) Done() <-chan struct{} { return s.done }

// Stop stops the source, waits for the Sampler's goroutine, and returns
// how the source ended.
func (s *Sampler) Stop() error {
	err := s.src.Stop()
	<-s.done
	return err
}

// Source names the stream's source (Config.Source).
func (s *Sampler) Source() string { return s.cfg.Source }
