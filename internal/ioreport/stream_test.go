package ioreport_test

import (
	"io"
	"math"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/fakepm"
	"github.com/exopower/exopower/internal/ioreport"
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
