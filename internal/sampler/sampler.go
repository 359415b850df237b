// Package sampler turns a stream of powermetrics samples into the energy of
// a span of time.
//
// A Sampler owns the stream: one goroutine reads it, places every window on
// one monotonic timeline, and integrates the windows from the start of the
// measured span (t = 0, set by Begin) on. End cuts the span at its end:
// windows that straddle either edge count only for their part inside, and
// the stretch after the last window is measured by waiting for the window
// that covers it (asking powermetrics for it at once where that is
// possible), never extrapolated. What could not be measured shows in the
// result's coverage and warnings.
package sampler

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/exopower/exopower/internal/powermetrics"
)

// Source is a stream of samples; *powermetrics.Process is one.
type Source interface {
	// Next returns the next sample, a *powermetrics.DocumentError for a
	// refused document (the stream goes on), or another error at its end.
	Next() (powermetrics.Sample, error)
	// CanRequestSample says whether RequestSample can work.
	CanRequestSample() bool
	// RequestSample asks for a sample now.
	RequestSample() error
	// Stop ends the stream and says how it ended.
	Stop() error
}

// Config tunes a Sampler.
type Config struct {
	// Interval is the sample interval powermetrics was given.
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
	// OnWindow, when set, is called from the Sampler's goroutine with
	// every window after Begin and the energy since Begin. It must not
	// call the Sampler.
	OnWindow func(Window, Totals)
}

// Totals is what was measured from the start of the span to the end of a
// window.
type Totals struct {
	// Elapsed is the time from the start of the span.
	Elapsed time.Duration
	// Energy is in joules, per component.
	Energy powermetrics.Values
	// Peak is the highest window average, in watts, per component.
	Peak    powermetrics.Values
	Samples int
}

// Sampler reads a Source and measures spans of its timeline.
type Sampler struct {
	src Source
	cfg Config

	mu        sync.Mutex
	changed   chan struct{} // closed and replaced whenever state changes
	placer    placer
	ledger    *ledger
	begun     bool
	windows   int // windows placed, in all
	first     *powermetrics.Sample
	last      powermetrics.Sample
	has       powermetrics.Components
	fatal     error // a stream error that came before any sample
	ended     bool
	endErr    error // how the stream ended (io.EOF for a clean end)
	lost      []string
	lostCount int
	long      []string
	done      chan struct{}
}

// Start starts reading src. Stop must be called to end it.
func Start(src Source, cfg Config) *Sampler {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.ReadyTimeout == 0 {
		cfg.ReadyTimeout = 5*time.Second + 2*cfg.Interval
	}
	if cfg.Grace == 0 {
		cfg.Grace = cfg.Interval/2 + 250*time.Millisecond
	}
	s := &Sampler{src: src, cfg: cfg, changed: make(chan struct{}), done: make(chan struct{}), ledger: new(ledger)}
	go s.loop()
	return s
}

func (s *Sampler) loop() {
	defer close(s.done)
	for {
		smp, err := s.src.Next()
		var de *powermetrics.DocumentError
		switch {
		case err == nil:
			s.take(smp)
		case errors.As(err, &de) && !errors.Is(err, powermetrics.ErrTooLarge):
			s.refuse(de)
		default:
			s.mu.Lock()
			s.ended, s.endErr = true, err
			s.notify()
			s.mu.Unlock()
			return
		}
	}
}

// notify wakes every waiter; s.mu must be held.
func (s *Sampler) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *Sampler) take(smp powermetrics.Sample) {
	s.mu.Lock()
	w := s.placer.place(smp)
	s.windows++
	if s.first == nil {
		s.first = &smp
	}
	s.last = smp
	var cb func(Window, Totals)
	var tot Totals
	if s.begun {
		s.has.CPU, s.has.GPU, s.has.ANE = s.has.CPU || smp.Has.CPU, s.has.GPU || smp.Has.GPU, s.has.ANE || smp.Has.ANE
		if long := max(10*s.cfg.Interval, 5*time.Second); smp.Window > long && len(s.long) < maxLost {
			// Its power is an average like any other, so it counts; but
			// whatever ran was likely stopped, and people should know.
			s.long = append(s.long, fmt.Sprintf("document %d covers %v, %.0f times the interval: the Mac may have slept",
				smp.Index, smp.Window.Round(time.Millisecond), float64(smp.Window)/float64(s.cfg.Interval)))
		}
		s.ledger.add(w)
		if cb = s.cfg.OnWindow; cb != nil {
			tot = totals(s.ledger.live, s.ledger.origin)
		}
	}
	s.notify()
	s.mu.Unlock()
	if cb != nil {
		cb(w, tot)
	}
}

func totals(t tally, origin time.Time) Totals {
	var el time.Duration
	if !t.end.IsZero() {
		el = t.end.Sub(origin)
	}
	return Totals{Elapsed: el, Energy: t.energy(), Peak: t.peak, Samples: t.samples}
}

// maxLost bounds the messages kept about lost documents.
const maxLost = 5

func (s *Sampler) refuse(de *powermetrics.DocumentError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.first == nil && (errors.Is(de, powermetrics.ErrNoPowerData) || errors.Is(de, powermetrics.ErrIntel)) {
		// The stream has nothing exopower can measure: say so now rather
		// than wait for samples that will never come.
		s.fatal = de
		s.notify()
		return
	}
	if errors.Is(de, powermetrics.ErrTruncated) && !s.begun {
		return
	}
	s.placer.breakChain()
	if s.begun {
		s.lostCount++
		if len(s.lost) < maxLost {
			s.lost = append(s.lost, de.Error())
		}
	}
	s.notify()
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

// NoSampleError says powermetrics produced no sample in time.
type NoSampleError struct{ Waited time.Duration }

func (e *NoSampleError) Error() string {
	return fmt.Sprintf("powermetrics produced no sample in %v", e.Waited.Round(time.Millisecond))
}

// StreamEndedError says the stream ended before its first sample.
type StreamEndedError struct{ Err error }

func (e *StreamEndedError) Error() string {
	if e.Err == nil || e.Err == io.EOF {
		return "powermetrics ended before its first sample"
	}
	return fmt.Sprintf("powermetrics ended before its first sample: %v", e.Err)
}

func (e *StreamEndedError) Unwrap() error { return e.Err }

// Ready waits for the first sample, proof that powermetrics runs and
// measures. It fails when the stream ends first or cannot be measured, or
// after Config.ReadyTimeout.
func (s *Sampler) Ready(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wait(ctx, s.cfg.Now().Add(s.cfg.ReadyTimeout), func() bool {
		return s.first != nil || s.fatal != nil || s.ended
	})
	switch {
	case s.first != nil:
		return nil
	case s.fatal != nil:
		return s.fatal
	case s.ended:
		return &StreamEndedError{Err: s.endErr}
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return &NoSampleError{Waited: s.cfg.ReadyTimeout}
}

// requests reports whether the Sampler asks the source for samples.
func (s *Sampler) requests() bool { return s.src.CanRequestSample() }

// Begin starts the measured span and returns its start, t = 0. Where the
// source takes requests it first asks for a sample and waits (at most an
// interval and the grace) for it, so that a window ends just before t = 0
// and the next one starts there.
func (s *Sampler) Begin(ctx context.Context) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.requests() && !s.ended {
		n := s.windows
		if s.src.RequestSample() == nil {
			s.wait(ctx, s.cfg.Now().Add(s.cfg.Interval+s.cfg.Grace), func() bool { return s.windows > n || s.ended })
		}
	}
	t0 := s.cfg.Now()
	s.ledger.origin = t0
	s.begun = true
	return t0
}

// Result is what was measured over a span.
type Result struct {
	// Start is the start of the span (t = 0), on the monotonic clock.
	Start time.Time
	// Duration is the span's length.
	Duration time.Duration
	// Energy is in joules, per component.
	Energy powermetrics.Values
	// Average is Energy / Duration, in watts: the time-weighted mean.
	Average powermetrics.Values
	// Peak is the highest window average, in watts.
	Peak powermetrics.Values
	// Samples is the number of windows that overlap the span.
	Samples int
	// Coverage is the fraction of the span covered by measured windows:
	// 1 when all of it was measured.
	Coverage float64
	// Has says which components the stream reported.
	Has powermetrics.Components
	// HWModel, OSBuild and ThermalPressure come from the stream's
	// documents (the last thermal pressure seen).
	HWModel, OSBuild, ThermalPressure string
	// Warnings say what was estimated or left out, for people to read.
	Warnings []string
	// Ended reports that the stream ended before the span did.
	Ended bool
}

// End ends the span at end and returns what was measured over it. Unless
// the stream has ended, it waits for the window that covers end (asking
// for it at once where the source takes requests), at most one interval
// and the grace after end, or until ctx ends.
func (s *Sampler) End(ctx context.Context, end time.Time) Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	covered := func() bool { return s.ended || !s.placer.end.Before(end) }
	if !covered() && s.requests() {
		s.src.RequestSample()
	}
	s.wait(ctx, end.Add(s.cfg.Interval+s.cfg.Grace), covered)
	return s.result(end)
}

// Source returns the machine model and macOS build that the stream's first
// document names.
func (s *Sampler) Source() (hwModel, osBuild string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.first == nil {
		return "", ""
	}
	return s.first.HWModel, s.first.OSBuild
}

func (s *Sampler) result(end time.Time) Result {
	l := s.ledger
	r := Result{Start: l.origin, Duration: end.Sub(l.origin), Has: s.has}
	if s.first != nil {
		r.HWModel, r.OSBuild = s.first.HWModel, s.first.OSBuild
		r.ThermalPressure = s.last.ThermalPressure
	}
	t, ok := l.until(end)
	if !ok {
		r.Warnings = append(r.Warnings, "the end of the span is older than the windows kept; measured up to the last window instead")
		t = l.live
	}
	r.Energy, r.Peak, r.Samples = t.energy(), t.peak, t.samples
	if r.Duration > 0 {
		r.Average = r.Energy.Scale(1 / r.Duration.Seconds())
		r.Coverage = min(1, float64(t.covered)/float64(r.Duration))
	} else if r.Samples > 0 {
		r.Coverage = 1
	}
	if s.ended && s.endErr != nil && s.endErr != io.EOF {
		r.Warnings = append(r.Warnings, "the stream broke off: "+s.endErr.Error())
	}
	if s.ended && (t.end.IsZero() || t.end.Before(end)) {
		r.Ended = true
		missing := r.Duration
		if !t.end.IsZero() {
			missing = end.Sub(t.end)
		}
		r.Warnings = append(r.Warnings, fmt.Sprintf("powermetrics stopped %v before the end: the last %v are not measured",
			missing.Round(time.Millisecond), missing.Round(time.Millisecond)))
	} else if !t.end.IsZero() && t.end.Before(end) {
		missing := end.Sub(t.end)
		r.Warnings = append(r.Warnings, fmt.Sprintf("no window covered the last %v of the span in time: not measured", missing.Round(time.Millisecond)))
	}
	if s.lostCount > 0 {
		r.Warnings = append(r.Warnings, lostWarning(s.lostCount, s.lost, "their windows are interpolated from their neighbours"))
	}
	r.Warnings = append(r.Warnings, s.long...)
	if r.Samples > 0 {
		r.Warnings = append(r.Warnings, missingComponents(s.has)...)
	}
	return r
}

func lostWarning(n int, lost []string, what string) string {
	msg := fmt.Sprintf("%d powermetrics document(s) could not be used; %s", n, what)
	for _, l := range lost {
		msg += "\n  " + l
	}
	if n > len(lost) {
		msg += fmt.Sprintf("\n  and %d more", n-len(lost))
	}
	return msg
}

// missingComponents warns of the parts of the SoC a stream did not report.
func missingComponents(has powermetrics.Components) []string {
	var missing []string
	for _, c := range []struct {
		name string
		has  bool
	}{{"CPU", has.CPU}, {"GPU", has.GPU}, {"ANE", has.ANE}} {
		if !c.has {
			missing = append(missing, c.name)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("the stream has no %s power: counted as 0", strings.Join(missing, ", "))}
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
