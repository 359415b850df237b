package ioreport_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/fakepm"
	"github.com/exopower/exopower/internal/ioreport"
	"github.com/exopower/exopower/internal/power"
	"github.com/exopower/exopower/internal/sampler"
)

// A stream reads at its interval, and its windows add up to the fake's
// exact energy between the first reading and the last: the counters'
// differences, cut to their units, lose nothing along the way.
func TestAStreamsWindowsAddUpToTheExactEnergy(t *testing.T) {
	prof, _ := fakepm.ParseProfile(fakepm.DefaultProfile)
	lib := fakepm.NewIOReport(prof, "", nil)
	s, err := ioreport.NewStream(lib, 50*time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	var total, system float64
	var first, last time.Time
	for i := range 12 {
		smp, err := s.Next()
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = smp.Arrival.Add(-smp.Window)
		}
		last = smp.Arrival
		total += smp.Energy.Total
		system += smp.Energy.System
		if !smp.Has.CPU || !smp.Has.GPU || !smp.Has.ANE || !smp.Has.DRAM || !smp.Has.System || smp.HWModel != "Mac14,14" {
			t.Fatalf("window %d: has %+v, model %q", i, smp.Has, smp.HWModel)
		}
	}
	want := prof.Energy(first, last).Total()
	if e := math.Abs(total-want) / want; e > 0.005 {
		t.Errorf("%.5f J over %v, exact %.5f J: off by %.3f%%", total, last.Sub(first), want, 100*e)
	}
	if e := math.Abs(system-fakepm.SystemEnergy(first, last)) / system; e > 0.001 {
		t.Errorf("system %.5f J, exact %.5f J", system, fakepm.SystemEnergy(first, last))
	}
}

// A reading asked for is taken at once, not at the next interval; after
// Stop, Next ends the stream.
func TestARequestedReadingComesAtOnce(t *testing.T) {
	prof, _ := fakepm.ParseProfile("0=10,0,0")
	s, err := ioreport.NewStream(fakepm.NewIOReport(prof, "", nil), time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !s.CanRequestSample() {
		t.Fatal("a stream that takes no requests")
	}
	s.RequestSample()
	smp, err := s.Next()
	if err != nil || smp.Window >= time.Hour {
		t.Fatalf("window %v, %v: want one at once", smp.Window, err)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Next(); err != io.EOF {
		t.Errorf("Next after Stop: %v, want io.EOF", err)
	}
}

// What Record writes of the fake reads back as its exact energy: a
// recording made on a Mac gives report what a live run would.
func TestARecordReadsBackAsTheEnergyItRecorded(t *testing.T) {
	prof, _ := fakepm.ParseProfile("period=0.4 0=9,3,1 0.2=2,1,0")
	lib := fakepm.NewIOReport(prof, "", nil)
	var buf bytes.Buffer
	before := time.Now()
	n, err := ioreport.Record(context.Background(), lib, 20*time.Millisecond, 15, &buf, nil)
	after := time.Now()
	if err != nil || n != 15 {
		t.Fatalf("%d readings, %v", n, err)
	}
	rec, err := ioreport.NewRecording(&buf)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sampler.RecordingWindows(rec, ioreport.Name, nil)
	if err != nil || res.Samples != 14 || !res.Has.System || res.HWModel != "Mac14,14" {
		t.Fatalf("%+v, %v", res, err)
	}
	// The recording spans 14 intervals between before and after.
	if bound := prof.Energy(before, after).Total(); res.Energy.Total <= 0 || res.Energy.Total > bound {
		t.Errorf("%.5f J recorded, more than the %.5f J the fake drew meanwhile", res.Energy.Total, bound)
	}
}

// flaky is a Library whose reads fail while fails is above 0. It gives
// the fake its clock and keeps the moment of each reading the fake gave:
// the stream stamps a reading a moment after the fake reads its clock, a
// moment a loaded machine stretches, so the stream's window is not the
// truth to hold a window's energy to.
type flaky struct {
	ioreport.Library
	fails int

	mu    sync.Mutex
	clock time.Time   // the fake's last reading of its clock
	reads []time.Time // the moments of the readings the fake gave
}

func newFlaky(prof fakepm.Profile) *flaky {
	f := &flaky{}
	f.Library = fakepm.NewIOReport(prof, "", f.now)
	return f
}

func (f *flaky) now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.clock = time.Now()
	return f.clock
}

func (f *flaky) Read(values []int64) error {
	if f.fails > 0 {
		f.fails--
		return errors.New("IOReport gave no sample")
	}
	if err := f.Library.Read(values); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads = append(f.reads, f.clock)
	return nil
}

// last is the time between the last two readings the fake gave.
func (f *flaky) last() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reads[len(f.reads)-1].Sub(f.reads[len(f.reads)-2])
}

// A reading that fails is taken again at the next interval, and loses
// nothing: the next window's counters hold all the energy since the last
// reading. Five in a row end the stream, naming why.
func TestAFailedReadingLosesNothingAndFiveInARowEndTheStream(t *testing.T) {
	prof, _ := fakepm.ParseProfile("0=10,2,0.5")
	lib := newFlaky(prof)
	s, err := ioreport.NewStream(lib, 20*time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	lib.fails = 4
	smp, err := s.Next()
	if err != nil {
		t.Fatal(err)
	}
	// The window runs over the four failed intervals and the fifth, and
	// holds the fake's energy between its two good readings, to the
	// three channels' whole mJ.
	if e, want := smp.Energy.Total, 12.5*lib.last().Seconds(); smp.Window < 100*time.Millisecond || math.Abs(e-want) > 0.003 {
		t.Errorf("window %v of %.4f J, want one over the failed readings of %.4f J", smp.Window, e, want)
	}
	lib.fails = 5
	if _, err := s.Next(); err == nil || !strings.Contains(err.Error(), "5 readings of IOReport in a row failed: IOReport gave no sample") {
		t.Errorf("after five failed readings: %v", err)
	}
}

// However many readings fail in a row, the window after them holds all
// the energy since the last good one: a failed reading does not take
// the turn of the two buffers, so an odd number of them (one) did not
// leave the next reading written over the one before, a window of 0 J.
func TestAnyNumberOfFailedReadingsLosesNothing(t *testing.T) {
	prof, _ := fakepm.ParseProfile("0=10,2,0.5")
	for fails := 1; fails < 5; fails++ {
		lib := newFlaky(prof)
		s, err := ioreport.NewStream(lib, 10*time.Millisecond, nil)
		if err != nil {
			t.Fatal(err)
		}
		lib.fails = fails
		smp, err := s.Next()
		s.Stop()
		if err != nil {
			t.Fatal(err)
		}
		// The counters are cut to whole mJ, three channels of them.
		if e, want := smp.Energy.Total, 12.5*lib.last().Seconds(); math.Abs(e-want) > 0.003 {
			t.Errorf("%d failed: window %v of %.4f J, want %.4f J", fails, smp.Window, e, want)
		}
	}
}

// Counters that go back are a break, and serve counts breaks as the
// source's restarts.
func TestCountersThatGoBackAreCountedAsRestarts(t *testing.T) {
	prof, _ := fakepm.ParseProfile("0=10,2,0.5")
	s, err := ioreport.NewStream(fakepm.NewIOReport(prof, "back-after=3", nil), 10*time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	var breaks int
	for range 6 {
		_, err := s.Next()
		var be *power.BreakError
		if errors.As(err, &be) {
			breaks++
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if n, last := s.Restarts(); breaks == 0 || n != breaks || last == nil {
		t.Errorf("%d breaks read, Restarts says %d (%v)", breaks, n, last)
	}
}

// channelsOnly is a Library of the given channels, whose counters stay 0.
type channelsOnly []ioreport.Channel

func (c channelsOnly) Subscribe() ([]ioreport.Channel, error) { return c, nil }
func (c channelsOnly) Read([]int64) error                     { return nil }
func (c channelsOnly) Select([]int)                           {}
func (c channelsOnly) SystemPower() (float64, bool)           { return 0, false }
func (c channelsOnly) Machine() (string, string)              { return "", "" }
func (c channelsOnly) Close() error                           { return nil }

// A group without a CPU, GPU or ANE channel that exopower knows is no
// source: the stream refuses to start rather than measure 0 W.
func TestAStreamWithoutTheSoCsChannelsIsRefused(t *testing.T) {
	lib := channelsOnly{{Group: ioreport.Group, Name: "ISP", Unit: "mJ"}, {Group: ioreport.Group, Name: "DRAM", Unit: "mJ"}}
	if _, err := ioreport.NewStream(lib, time.Second, nil); err == nil || !strings.Contains(err.Error(), "no CPU, GPU or ANE energy channel") {
		t.Errorf("NewStream: %v", err)
	}
}

// selecting records what a stream selects of its Library.
type selecting struct {
	ioreport.Library
	selected []int
	calls    int
}

func (s *selecting) Select(indices []int) {
	s.selected, s.calls = indices, s.calls+1
	s.Library.Select(indices)
}

// A stream reads only the channels its plan sums: of the fake's ten, CPU
// Energy, GPU Energy, ANE and DRAM, selected before the first reading.
func TestAStreamSelectsTheChannelsItsPlanSums(t *testing.T) {
	prof, _ := fakepm.ParseProfile("0=10,2,0.5")
	lib := &selecting{Library: fakepm.NewIOReport(prof, "", nil)}
	s, err := ioreport.NewStream(lib, time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	var names []string
	for _, i := range lib.selected {
		names = append(names, fakepm.FakeChannels[i].Name)
	}
	if want := []string{"CPU Energy", "GPU Energy", "ANE", "DRAM"}; lib.calls != 1 || !slices.Equal(names, want) {
		t.Errorf("selected %v (%d calls), want %v once", names, lib.calls, want)
	}
	s.RequestSample()
	if smp, err := s.Next(); err != nil || smp.Energy.Total <= 0 {
		t.Errorf("a window over the selected channels: %+v, %v", smp.Energy, err)
	}
}

// failing is a Library whose Subscribe or Read fails as told, and which
// counts its Close calls.
type failing struct {
	ioreport.Library
	subscribe, read error
	closes          int
}

func (f *failing) Subscribe() ([]ioreport.Channel, error) {
	if f.subscribe != nil {
		return nil, f.subscribe
	}
	return f.Library.Subscribe()
}

func (f *failing) Read(values []int64) error {
	if f.read != nil {
		return f.read
	}
	return f.Library.Read(values)
}

func (f *failing) Close() error {
	f.closes++
	return f.Library.Close()
}

// brokenWriter fails every write.
type brokenWriter struct{}

func (brokenWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// A stream or a recording that fails to start, or a recording that
// fails on the way, closes its Library, so that nothing (the SMC's
// connection, the subscription) is left open; the error is the one that
// stopped it.
func TestEveryFailedStartClosesTheLibrary(t *testing.T) {
	prof, _ := fakepm.ParseProfile("0=10,2,0.5")
	refused, gone := errors.New("IOReport refused the subscription"), errors.New("IOReport gave no sample")
	for _, c := range []struct {
		name            string
		subscribe, read error
		start           func(ioreport.Library) error
		want            string
	}{
		{"a stream whose subscription fails", refused, nil, stream, refused.Error()},
		{"a stream whose first reading fails", nil, gone, stream, gone.Error()},
		{"a recording whose subscription fails", refused, nil, record(&bytes.Buffer{}), refused.Error()},
		{"a recording whose reading fails", nil, gone, record(&bytes.Buffer{}), gone.Error()},
		{"a recording that cannot be written", nil, nil, record(brokenWriter{}), "disk full"},
	} {
		t.Run(c.name, func(t *testing.T) {
			lib := &failing{Library: fakepm.NewIOReport(prof, "", nil), subscribe: c.subscribe, read: c.read}
			if err := c.start(lib); err == nil || err.Error() != c.want {
				t.Errorf("error %v, want %q", err, c.want)
			}
			if lib.closes == 0 {
				t.Error("the library was left open")
			}
		})
	}
}

func stream(lib ioreport.Library) error {
	_, err := ioreport.NewStream(lib, time.Hour, nil)
	return err
}

func record(w io.Writer) func(ioreport.Library) error {
	return func(lib ioreport.Library) error {
		_, err := ioreport.Record(context.Background(), lib, time.Millisecond, 3, w, nil)
		return err
	}
}
