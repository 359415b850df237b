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
	// Read reads every subscribed channel's cumulative counter into
	// values (as long as Subscribe's channels).
	Read(values []int64) error
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

	w        windows
	bufs     [2][]int64 // a reading's counters, and the one before's
	flip     int
	noSMC    bool      // the first reading had no system's power
	next     time.Time // when the next reading is due
	failed   int       // readings failed in a row
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

// ErrNoRail says that IOReport's channels carry none of the SoC's rails
// that exopower knows.
var ErrNoRail = errors.New("IOReport's Energy Model group has no CPU, GPU or ANE energy channel exopower knows")

// NewStream subscribes to lib's channels and takes the first reading,
// from which the first window runs. now is the monotonic clock (time.Now
// when nil).
func NewStream(lib Library, interval time.Duration, now func() time.Time) (*Stream, error) {
	if now == nil {
		now = time.Now
	}
	channels, err := lib.Subscribe()
	if err != nil {
		return nil, err
	}
	s := &Stream{lib: lib, plan: NewPlan(channels), interval: interval, now: now,
		requests: make(chan struct{}, 1), stop: make(chan struct{})}
	if !s.plan.Has.CPU && !s.plan.Has.GPU && !s.plan.Has.ANE {
		lib.Close()
		return nil, ErrNoRail
	}
	s.w.plan = &s.plan
	s.bufs = [2][]int64{make([]int64, len(channels)), make([]int64, len(channels))}
	s.hw, s.os = lib.Machine()
	first, err := s.read()
	if err != nil {
		lib.Close()
		return nil, err
	}
	s.w.next(first)
	s.noSMC = !first.HasSystem
	s.next = first.At.Add(interval)
	return s, nil
}

// Warnings say what of the channels was left out, and why, and that the
// system's power is not read where the SMC did not answer.
func (s *Stream) Warnings() []string {
	if s.noSMC {
		return append(slices.Clip(s.plan.Warnings), NoSMC)
	}
	return s.plan.Warnings
}

// NoSMC says why a reading has no system's power.
const NoSMC = "the SMC gave no system power (PSTR; a virtual machine has none): the whole Mac's power is not measured, only the SoC's and the memory's"

// read takes a reading of every channel and of the SMC.
func (s *Stream) read() (Reading, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return Reading{}, io.EOF
	}
	// Two buffers, in turn: the windows keep the reading before.
	s.flip ^= 1
	r := Reading{Values: s.bufs[s.flip]}
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
// io.EOF once the stream is stopped, and a *power.BreakError where a
// counter went back.
func (s *Stream) Next() (power.Sample, error) {
	for {
		t := time.NewTimer(s.next.Sub(s.now()))
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
		// from the one a request ended.
		s.next = r.At.Add(s.interval)
		smp, ok, err := s.w.next(r)
		if err != nil {
			s.mu.Lock()
			s.breaks, s.lastBreak = s.breaks+1, err
			s.mu.Unlock()
			return power.Sample{}, err
		}
		if ok {
			smp.HWModel, smp.OSBuild = s.hw, s.os
			return smp, nil
		}
	}
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
