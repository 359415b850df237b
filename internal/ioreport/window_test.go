package ioreport

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/power"
)

var t0 = time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)

func at(ms float64) time.Time { return t0.Add(time.Duration(ms * 1e6)) }

// next pushes r and hands over the first thing it gave: a window (ok), a
// refusal or a break (err), or nothing.
func (w *windows) next(r Reading) (power.Sample, bool, error) {
	w.push(r)
	o, ok := w.pop()
	if !ok {
		return power.Sample{}, false, nil
	}
	return o.s, o.err == nil, o.err
}

// simple is a plan of one channel a rail, in mJ, nJ, mJ, mJ.
func simple() *Plan {
	p := NewPlan([]Channel{{Group: Group, Name: "CPU Energy", Unit: "mJ"}, {Group: Group, Name: "GPU Energy", Unit: "nJ"},
		{Group: Group, Name: "ANE", Unit: "mJ"}, {Group: Group, Name: "DRAM", Unit: "mJ"}})
	return &p
}

func reading(ms float64, cpu, gpu, ane, dram int64, system float64) Reading {
	return Reading{At: at(ms), Values: []int64{cpu, gpu, ane, dram}, System: system, HasSystem: system >= 0}
}

// A window's energy is its counters' exact difference, its power that
// over the measured time, and the system's energy the trapezoid over the
// readings at its edges.
func TestAWindowIsTheDifferenceOfTwoReadings(t *testing.T) {
	w := newWindows(simple(), "")
	if _, ok, err := w.next(reading(0, 1000, 5e9, 0, 200, 40)); ok || err != nil {
		t.Fatalf("the first reading gave a window: %v, %v", ok, err)
	}
	s, ok, err := w.next(reading(100, 1600, 5.25e9, 30, 290, 60))
	if !ok || err != nil {
		t.Fatal(ok, err)
	}
	want := power.Values{CPU: 0.6, GPU: 0.25, ANE: 0.03, Total: 0.88, DRAM: 0.09, System: 5}
	for i, g := range s.Energy.Array() {
		if math.Abs(g-want.Array()[i]) > 1e-12 {
			t.Errorf("energy %+v, want %+v", s.Energy, want)
			break
		}
	}
	if s.Window != 100*time.Millisecond || !s.Arrival.Equal(at(100)) || math.Abs(s.Power.Total-8.8) > 1e-9 || !s.Has.System || !s.Has.DRAM || s.Quirks != 0 {
		t.Errorf("window %v arriving %v, power %+v, has %+v, quirks %v", s.Window, s.Arrival, s.Power, s.Has, s.Quirks)
	}
}

// PSTR is a reading at an instant: the trapezoid over readings at the
// windows' edges integrates a smooth power to within a hair of its exact
// integral, where holding each reading would not.
func TestTheSystemsEnergyIsTheTrapezoidOfItsReadings(t *testing.T) {
	pstr := func(ms float64) float64 { return 50 + 10*math.Sin(2*math.Pi*ms/7000) }
	exact := func(a, b float64) float64 { // ∫ in joules over [a, b] ms
		k := 2 * math.Pi / 7000
		return 50*(b-a)/1000 - 10/k*(math.Cos(k*b)-math.Cos(k*a))/1000
	}
	w := newWindows(simple(), "")
	w.next(reading(0, 0, 0, 0, 0, pstr(0)))
	var sum float64
	for ms := 100.0; ms <= 5000; ms += 100 {
		s, _, _ := w.next(reading(ms, int64(ms), 0, 0, 0, pstr(ms)))
		sum += s.Energy.System
	}
	if e := math.Abs(sum-exact(0, 5000)) / exact(0, 5000); e > 1e-4 {
		t.Errorf("system energy %.6f J, exact %.6f J: off by %.4f%%", sum, exact(0, 5000), 100*e)
	}
	// One reading with the SMC, the next without: it is held.
	w = newWindows(simple(), "")
	w.next(reading(0, 0, 0, 0, 0, 30))
	if s, _, _ := w.next(reading(200, 1, 0, 0, 0, -1)); math.Abs(s.Energy.System-6) > 1e-12 {
		t.Errorf("a reading held over 200 ms: %v J, want 6", s.Energy.System)
	}
}

// Where the system's energy comes out below the SoC's own (its reading
// lags the counters), the SoC's is taken, and the window says so.
func TestASystemBelowTheSoCIsRaisedToIt(t *testing.T) {
	w := newWindows(simple(), "")
	w.next(reading(0, 0, 0, 0, 0, 5))
	s, _, _ := w.next(reading(100, 2000, 0, 0, 0, 5)) // 20 W of CPU, 5 W of system
	if s.Energy.System != s.Energy.Total || s.Quirks&power.SystemRaised == 0 {
		t.Errorf("system %v J, SoC %v J, quirks %v", s.Energy.System, s.Energy.Total, s.Quirks)
	}
	// The memory is under the SMC's power too: 20 W of CPU and 10 W of
	// DRAM under 25 W of system take 30 W.
	w = newWindows(simple(), "")
	w.next(reading(0, 0, 0, 0, 0, 25))
	if s, _, _ := w.next(reading(100, 2000, 0, 0, 1000, 25)); math.Abs(s.Energy.System-3) > 1e-12 || s.Quirks&power.SystemRaised == 0 {
		t.Errorf("system %v J over CPU %v J and DRAM %v J, quirks %v; want 3 J", s.Energy.System, s.Energy.CPU, s.Energy.DRAM, s.Quirks)
	}
}

// A counter that goes back and goes on from there (the counters were
// reset) is a break, never negative energy, judged by the reading after
// it: the chain starts again from the reset's reading.
func TestACounterThatGoesBackAndGoesOnIsAReset(t *testing.T) {
	w := newWindows(simple(), "")
	w.next(reading(0, 5000, 0, 0, 0, 10))
	if _, ok, err := w.next(reading(100, 10, 0, 0, 0, 10)); ok || err != nil {
		t.Fatalf("the reading that went back gave %v, %v: want it held, in doubt", ok, err)
	}
	_, ok, err := w.next(reading(200, 110, 0, 0, 0, 10))
	var be *power.BreakError
	if ok || !errors.As(err, &be) || be.Source != Name || !strings.Contains(err.Error(), "the CPU's counter went back by 4.99 J") {
		t.Fatalf("ok %v, err %v: want a break of ioreport naming the CPU", ok, err)
	}
	if o, ok := w.pop(); !ok || o.err != nil || math.Abs(o.s.Energy.CPU-0.1) > 1e-12 || o.s.Window != 100*time.Millisecond {
		t.Errorf("the window after the reset: %+v, %v: want 0.1 J over 100 ms from the reset's reading", o.s.Energy, o.err)
	}
}

// A CPU counter that stands still while the GPU's moves and then jumps is
// batched (macOS publishes some counters every 2 s or so); one that stays
// still past that, while the system's power moves, is stuck.
func TestBatchedAndStuckCounters(t *testing.T) {
	w := newWindows(simple(), "")
	w.next(reading(0, 0, 0, 0, 0, 20))
	var got []power.Quirk
	cpu := int64(0)
	for i := 1; i <= 60; i++ {
		if i%20 == 0 && i <= 20 {
			cpu += 2000 // a batch, after 2 s
		}
		s, _, _ := w.next(reading(float64(i*100), cpu, int64(i)*1e8, 0, int64(i)*100, 20+float64(i%3)))
		got = append(got, s.Quirks)
	}
	count := func(q power.Quirk, from, to int) (n int) {
		for _, g := range got[from:to] {
			if g&q != 0 {
				n++
			}
		}
		return n
	}
	if count(power.CounterBatched, 0, 20) != 1 || got[19]&power.CounterBatched == 0 || count(power.CounterFlat, 0, 20) != 0 ||
		count(power.CounterStill, 0, 19) != 19 {
		t.Errorf("the first 2 s: %v; want the windows before the batch still, the batch's batched, nothing stuck", got[:20])
	}
	// The batch's step holds the windows' before: the system's power is
	// not raised to it, though it is far above.
	if count(power.SystemRaised, 0, 20) != 0 {
		t.Errorf("the system's energy raised in %d windows: %v", count(power.SystemRaised, 0, 20), got[:20])
	}
	// From 2.0 s on, the CPU counter stays still: stuck once still for
	// 3 s, from 5.0 s, in the ten windows that end after it.
	if n := count(power.CounterFlat, 20, 60); n != 10 || got[59]&power.CounterFlat == 0 || count(power.CounterBatched, 20, 60) != 0 {
		t.Errorf("after the batch: %d windows stuck (%v); want the 10 after 5 s", n, got[20:])
	}
}
