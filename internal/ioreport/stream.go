package ioreport

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/exopower/exopower/internal/power"
)

// Library is the part of reading that needs a Mac: IOReport's counters
// and the SMC, as plain values. Open gives the real one on macOS; tests
// and the fake give others.
type Library interface {
	// Subscribe subscribes to the Energy Model group and returns its
	// channels, in the order every Read gives their counters.
	Subscribe() ([]Channel, error)
	// Read reads the selected channels' cumulative counters into values
	// (as long as Subscribe's channels), every channel's where none were
	// selected.
	Read(values []int64) error
	// Select makes the reads that follow fill only values[i] for i in
	// indices, leaving the others as they are: a stream needs some six
	// of the hundreds of channels, and each costs calls into IOReport at
	// every reading. nil, or no call, selects every channel (a recording
	// keeps them all).
	Select(indices []int)
	// SystemPower reads the SMC's system power, in watts; ok is false
	// where the SMC does not answer (a virtual machine).
	SystemPower() (watts float64, ok bool)
	// Machine names the machine: its model (Mac14,14) and macOS build.
	Machine() (hwModel, osBuild string)
	// Close lets go of the subscription and the SMC.
	Close() error
}

// Stream reads a Library at each interval, and at once when asked, and
// yields a window per reading: a sampler.Source.
type Stream struct {
	lib      Library
	plan     Plan
	interval time.Duration
	now      func() time.Time
	hw, os   string

	w     windows
	buf   []int64   // a reading's counters
	noSMC string    // why the first reading had no system's power, if it had none
	next  time.Time // when the next reading is due
	// timer waits for the next reading: one for the stream's life, set
	// again for each, since a new one at every reading costs a channel
	// and a timer the garbage collector must reclaim.
	timer    *time.Timer
	failed   int // readings failed in a row
	requests chan struct{}
	stop     chan struct{}
	stopOnce sync.Once
	stopErr  error

	// mu keeps Stop from closing the library under a reading, and
	// guards breaks, which serve reads as the source's restarts.
	mu        sync.Mutex
	closed    bool
	breaks    int
	lastBreak error
}

// maxFailedReads is how many readings in a row may fail before the
// stream ends: a reading that fails loses nothing, since the next one's
// counters still hold all the energy since the last that did not.
const maxFailedReads = 5

// firstWindow bounds the first window: the stream is ready with its
// first window, and a command waits for that, whatever the interval.
const firstWindow = 100 * time.Millisecond

// soon is when a reading is taken after one held in doubt, which the
// next judges: a window's span edge waits on it.
const soon = 20 * time.Millisecond

// ErrNoRail says that IOReport's channels carry none of the SoC's rails
// that exopower knows.
var ErrNoRail = errors.New("IOReport's Energy Model group has no CPU, GPU or ANE energy channel exopower knows")

// NewStream subscribes to lib's channels and takes the first reading,
// from which the first window runs, at most firstWindow later. now is
// the monotonic clock (time.Now when nil).
func NewStream(lib Library, interval time.Duration, now func() time.Time) (*Stream, error) {
	if now == nil {
		now = time.Now
	}
	channels, err := lib.Subscribe()
	if err != nil {
		lib.Close() // a stream that does not start leaves nothing open
		return nil, err
	}
	s := &Stream{lib: lib, plan: NewPlan(channels), interval: interval, now: now,
		requests: make(chan struct{}, 1), stop: make(chan struct{})}
	if !s.plan.Has.CPU && !s.plan.Has.GPU && !s.plan.Has.ANE {
		lib.Close()
		return nil, ErrNoRail
	}
	lib.Select(s.plan.Indices())
	s.buf = make([]int64, len(channels))
	s.hw, s.os = lib.Machine()
	s.w = newWindows(&s.plan, s.hw)
	first, err := s.read()
	if err != nil {
		lib.Close()
		return nil, err
	}
	had := first.HasSystem
	s.w.push(first)
	switch {
	case s.w.zeroSystem > 0:
		s.noSMC = ZeroSMC
	case !had:
		s.noSMC = NoSMC
	}
	s.next = first.At.Add(min(interval, firstWindow))
	return s, nil
}

// Warnings say what of the channels was left out, and why, and that the
// system's power is not read where the SMC did not answer.
func (s *Stream) Warnings() []string {
	if s.noSMC != "" {
		return append(slices.Clip(s.plan.Warnings), s.noSMC)
	}
	return s.plan.Warnings
}

// NoSMC says why a reading has no system's power.
const NoSMC = "the SMC gave no system power (PSTR; a virtual machine has none): the whole Mac's power is not measured, only the SoC's and the memory's"

// ZeroSMC says why a reading whose SMC gave 0 W has no system's power.
const ZeroSMC = "the SMC's system power (PSTR) read 0 W, as on Macs that give no power information: taken as no system power, so the whole Mac's power is not measured, only the SoC's and the memory's"

// read takes a reading of every channel and of the SMC.
func (s *Stream) read() (Reading, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return Reading{}, io.EOF
	}
	// One buffer: the windows keep what they need of a reading, so a
	// reading that fails writes over nothing they hold.
	r := Reading{Values: s.buf}
	if err := s.lib.Read(r.Values); err != nil {
		return r, err
	}
	r.System, r.HasSystem = s.lib.SystemPower()
	r.At = s.now()
	r.Unix = time.Now()
	return r, nil
}

// Next waits for the next reading (at the interval, or at once when one
// was asked for) and returns the window since the one before. It returns
// io.EOF once the stream is stopped, a *power.BreakError where the
// counters were reset, and a *power.ImplausibleError for a window that
// cannot be true.
func (s *Stream) Next() (power.Sample, error) {
	for {
		if o, ok := s.w.pop(); ok {
			return s.hand(o)
		}
		t := s.wait(s.next.Sub(s.now()))
		select {
		case <-s.stop:
			t.Stop()
			return power.Sample{}, io.EOF
		case <-s.requests:
			t.Stop()
		case <-t.C:
		}
		r, err := s.read()
		switch {
		case err == io.EOF: // stopped
			return power.Sample{}, err
		case err != nil:
			if s.failed++; s.failed < maxFailedReads {
				s.next = s.now().Add(s.interval)
				continue
			}
			return power.Sample{}, fmt.Errorf("%d readings of IOReport in a row failed: %w", s.failed, err)
		}
		s.failed = 0
		// The next window runs from this reading, as powermetrics's run
		// from the one a request ended; a reading in doubt is judged by
		// one soon after it.
		s.next = r.At.Add(s.interval)
		s.w.push(r)
		if s.w.pending() {
			s.next = r.At.Add(min(s.interval, soon))
		}
	}
}

// wait is the stream's timer, set to fire after d. Since Go 1.23 a timer
// stopped or fired and then Reset sends nothing stale.
func (s *Stream) wait(d time.Duration) *time.Timer {
	if s.timer == nil {
		s.timer = time.NewTimer(d)
	} else {
		s.timer.Reset(d)
	}
	return s.timer
}

// hand hands over what a reading gave, counting breaks.
func (s *Stream) hand(o outcome) (power.Sample, error) {
	var be *power.BreakError
	if errors.As(o.err, &be) {
		s.mu.Lock()
		s.breaks, s.lastBreak = s.breaks+1, o.err
		s.mu.Unlock()
	}
	if o.err != nil {
		return power.Sample{}, o.err
	}
	o.s.HWModel, o.s.OSBuild = s.hw, s.os
	return o.s, nil
}

// Restarts says how many times the counters went back (a break in the
// stream, as a powermetrics started again is), and why the last time.
func (s *Stream) Restarts() (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.breaks, s.lastBreak
}

// ReadingName names what the stream reads, in messages.
func (s *Stream) ReadingName() string { return "reading" }

// CanRequestSample is true: a reading can be taken at any moment.
func (s *Stream) CanRequestSample() bool { return true }

// RequestSample asks for a reading now: a span's edge is a reading of its
// own, not the nearest window's.
func (s *Stream) RequestSample() error {
	select {
	case s.requests <- struct{}{}:
	default: // one is asked for already
	}
	return nil
}

// Stop ends the stream and lets go of the library.
func (s *Stream) Stop() error {
	s.stopOnce.Do(func() {
		close(s.stop)
		s.mu.Lock()
		defer s.mu.Unlock()
		s.closed = true
		s.stopErr = s.lib.Close()
	})
	return s.stopErr
}
