package ioreport

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/power"
)

// The course of a Mac three days after boot: the CPU at 10 W (mJ), the
// GPU at 2 W (nJ), the ANE idle, the memory at 1 W (mJ), the system at
// 30 W, read every 100 ms from t = 0.
const (
	cpuW, gpuW, dramW, systemW = 10.0, 2.0, 1.0, 30.0
	boot                       = 3 * 24 * 3600.0 // seconds since boot at t = 0
)

// course is the i-th reading on that course.
func course(i int) Reading {
	s := boot + float64(i)/10
	return Reading{At: at(float64(i) * 100), Values: []int64{int64(cpuW * s * 1e3), int64(gpuW * s * 1e9), 0, int64(dramW * s * 1e3)},
		System: systemW, HasSystem: true, Line: i + 2}
}

// judged feeds readings to a fresh chain of the simple plan, from a Mac
// of model, and returns what came out.
func judged(model string, readings ...Reading) (ss []power.Sample, errs []error) {
	w := newWindows(simple(), model)
	for _, r := range readings {
		w.push(r)
		for o, ok := w.pop(); ok; o, ok = w.pop() {
			if o.err != nil {
				errs = append(errs, o.err)
			} else {
				ss = append(ss, o.s)
			}
		}
	}
	return ss, errs
}

// sum is the windows' energy, time covered, and the readings dropped
// per rail.
func sum(ss []power.Sample) (e power.Values, covered time.Duration, glitches [power.NumRails]int, notes []string) {
	for _, s := range ss {
		e, covered = e.Add(s.Energy), covered+s.Window
		for r := range glitches {
			glitches[r] += s.Rails[r].Glitches
		}
		notes = append(notes, s.Notes...)
	}
	return e, covered, glitches, notes
}

// A lone reading that cannot be true (a counter at 0, as the binding
// writes for a channel with no simple value; a step of 1e15 J; a counter
// far below zero; a window of 1 ns with a window's energy) is dropped,
// and the energy across it is taken from the readings on either side:
// every joule of the course is there, nothing more, with the rail named.
func TestALoneBogusReadingIsDroppedAndBridged(t *testing.T) {
	for _, c := range []struct {
		name  string
		bogus func(r *Reading)
		rail  power.Rail
		note  string
	}{
		{"the CPU's counter at 0", func(r *Reading) { r.Values[0] = 0 }, CPU, "the CPU's counter went back by 2.592e+06 J"},
		{"a step of 1e15 J", func(r *Reading) { r.Values[0] += 1e18 }, CPU, "the CPU's counter moved 1e+15 J in 100ms"},
		{"a counter at -9e18", func(r *Reading) { r.Values[3] = -9e18 }, DRAM, "the DRAM's counter read -9000000000000000000, below zero"},
		{"the clock going back once", func(r *Reading) { r.At = r.At.Add(-time.Second) }, -1, "its clock went back 900ms"},
		{"a 1 ns window", func(r *Reading) { r.At = at(1000).Add(time.Nanosecond) }, CPU, "the CPU's counter moved 1 J in 1ns"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var rs []Reading
			for i := 0; i <= 20; i++ {
				r := course(i)
				if i == 11 {
					c.bogus(&r)
				}
				rs = append(rs, r)
			}
			ss, errs := judged("MacBookPro17,1", rs...)
			e, covered, glitches, notes := sum(ss)
			if len(errs) > 0 {
				t.Fatalf("errors %v: want the reading dropped, no break and no refusal", errs)
			}
			if covered != 2*time.Second || math.Abs(e.CPU-cpuW*2) > 2e-3 || math.Abs(e.GPU-gpuW*2) > 1e-6 || math.Abs(e.DRAM-dramW*2) > 2e-3 || math.Abs(e.System-systemW*2) > 1e-9 {
				t.Errorf("%v covered, energy %+v: want 2 s of the course exactly", covered, e)
			}
			for r := range glitches {
				if want := 0; glitches[r] != want && power.Rail(r) != c.rail || power.Rail(r) == c.rail && glitches[r] != 1 {
					t.Errorf("glitches %v: want one, of the %v", glitches, c.rail)
					break
				}
			}
			if len(notes) != 1 || !strings.Contains(notes[0], "a reading at line 13 was dropped: "+c.note) {
				t.Errorf("notes %q: want the line and %q", notes, c.note)
			}
		})
	}
}

// Counters that go back and go on from there were reset: a break, and
// the chain starts afresh from the reset's reading, never from a bogus
// value. Counters that jump and go on from there left their course: that
// window is refused, naming the rail and its power, and the chain goes on.
func TestAResetIsABreakAndAJumpIsARefusedWindow(t *testing.T) {
	var rs []Reading
	for i := 0; i <= 30; i++ {
		r := course(i)
		if i >= 10 {
			r.Values[0] -= int64(cpuW * (boot + 0.95) * 1e3) // reset to 0.05 s's worth
		}
		if i >= 20 {
			r.Values[1] += 5e18 // the GPU jumps by 5e9 J and goes on
		}
		rs = append(rs, r)
	}
	ss, errs := judged("Mac14,14", rs...)
	var be *power.BreakError
	var ie *power.ImplausibleError
	if len(errs) != 2 || !errors.As(errs[0], &be) || !strings.Contains(errs[0].Error(), "the CPU's counter went back by 2.592e+06 J at line 12 and went on from there: a reset") ||
		!errors.As(errs[1], &ie) || ie.Rail != GPU || !strings.Contains(errs[1].Error(), "the GPU reads 5e+10 W over 100ms, beyond the 1000 W that a Mac with an M1 to M3 Ultra can draw") {
		t.Fatalf("errors %v: want a reset naming the CPU, then the GPU's window refused", errs)
	}
	e, covered, _, _ := sum(ss)
	if covered != 2800*time.Millisecond || math.Abs(e.CPU-cpuW*2.8) > 3e-3 || math.Abs(e.GPU-gpuW*2.8) > 1e-6 {
		t.Errorf("%v covered, energy %+v: want 2.8 s of the course (the reset's and the jump's windows out)", covered, e)
	}
}

// A window over the 7 days a window may last is not measured: a break,
// as powermetrics's path refuses such a document, not gigajoules.
func TestAGapOfTenYearsIsNotMeasured(t *testing.T) {
	later := course(11)
	later.At = later.At.Add(10 * 365 * 24 * time.Hour)
	next := course(12)
	next.At = later.At.Add(100 * time.Millisecond)
	ss, errs := judged("", course(0), course(10), later, next)
	e, covered, _, _ := sum(ss)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "came after a gap of 3650 days, longer than the 7 days a window may last") {
		t.Fatalf("errors %v: want one break naming the gap", errs)
	}
	if covered != 1100*time.Millisecond || e.System > systemW*1.2 {
		t.Errorf("%v covered, %+v: want the second before and the 100 ms after, no more", covered, e)
	}
}

// Readings at the same instant keep their energy: the window after them
// holds it.
func TestReadingsAtOneInstantKeepTheirEnergy(t *testing.T) {
	twin := course(5)
	twin.Values = []int64{twin.Values[0] + 250, twin.Values[1], twin.Values[2], twin.Values[3]}
	ss, errs := judged("", course(0), course(5), twin, course(10))
	e, _, _, _ := sum(ss)
	if len(errs) != 0 || math.Abs(e.CPU-cpuW) > 2e-3 {
		t.Errorf("CPU %v J, errors %v: want the 10 J of the second", e.CPU, errs)
	}
}

// Counters that alternate between 0 and the course (as on some M5 Max
// Macs) lose no energy: each bogus reading is bridged.
func TestCountersThatAlternateWithZeroLoseNothing(t *testing.T) {
	var rs []Reading
	for i := 0; i <= 40; i++ {
		r := course(i)
		if i%2 == 1 {
			r.Values[0] = 0
		}
		rs = append(rs, r)
	}
	ss, errs := judged("Mac17,6", rs...)
	e, covered, glitches, _ := sum(ss)
	if len(errs) != 0 || covered != 4*time.Second || math.Abs(e.CPU-cpuW*4) > 3e-3 || glitches[CPU] != 20 {
		t.Errorf("%v covered, CPU %v J, %d glitches, errors %v: want 40 J over 4 s, 20 glitches", covered, e.CPU, glitches[CPU], errs)
	}
}

// The SMC's 0 W is no system power (Macs without power information read
// 0 there); a power beyond the Mac's is a bogus reading of the SMC: both
// are held from their neighbours.
func TestTheSMCsZeroIsNoSystemPower(t *testing.T) {
	zero := course(5)
	zero.System = 0
	huge := course(6)
	huge.System = 1e7
	w := newWindows(simple(), "MacBookPro17,1")
	var e float64
	for _, r := range []Reading{course(4), zero, huge, course(7)} {
		w.push(r)
		for o, ok := w.pop(); ok; o, ok = w.pop() {
			e += o.s.Energy.System
		}
	}
	if math.Abs(e-systemW*0.3) > 1e-9 || w.zeroSystem != 1 || w.badSystem != 1 {
		t.Errorf("system %v J, %d zero, %d beyond: want 9 J held from the neighbours", e, w.zeroSystem, w.badSystem)
	}
	// Zero at every reading: no system power at all.
	z := []Reading{course(0), course(1)}
	for i := range z {
		z[i].System = 0
	}
	if ss, _ := judged("", z...); len(ss) != 1 || ss[0].Has.System {
		t.Errorf("every PSTR 0 W: has system %v", ss[0].Has.System)
	}
}

// A batch that lands after the CPU's counter stood still for 3 s is
// judged over those 3 s, not over its window: its energy is believed,
// and its warning names the CPU and how long it stood.
func TestABatchIsJudgedOverTheTimeItStood(t *testing.T) {
	var rs []Reading
	for i := 0; i <= 40; i++ {
		r := course(i)
		if i >= 5 && i < 35 {
			r.Values[0] = course(5).Values[0] // still from 0.5 s to 3.5 s, then 3 s at once
		}
		rs = append(rs, r)
	}
	ss, errs := judged("MacBookAir10,1", rs...)
	e, _, _, _ := sum(ss)
	var tally power.QuirkTally
	for i := range ss {
		tally.Add(&ss[i])
	}
	ws := tally.Warnings()
	if len(errs) != 0 || math.Abs(e.CPU-cpuW*4) > 3e-3 || len(ws) != 1 || !strings.Contains(ws[0], "the CPU's energy counter moved in a step after standing still for 3.0 s") {
		t.Errorf("CPU %v J, errors %v, warnings %q", e.CPU, errs, ws)
	}
	// The batch's window holds 30 J in 100 ms, 300 W over it alone: a
	// peak counts it at the 10 W it drew over the 3 s it accrued.
	for i := range ss {
		if ss[i].Quirks&power.CounterBatched != 0 {
			if p := ss[i].PeakPower(); math.Abs(p.CPU-cpuW) > 0.01 || math.Abs(ss[i].Power.CPU-300) > 0.1 || math.Abs(p.Total-p.CPU-gpuW) > 0.01 {
				t.Errorf("the batch's window: power %v W, as a peak %v W (total %v W)", ss[i].Power.CPU, p.CPU, p.Total)
			}
		}
	}
}

// The bounds are the Mac's: 150 W of CPU is beyond an M1 MacBook Air's
// SoC but within an Ultra's.
func TestTheBoundsAreTheMacs(t *testing.T) {
	var rs []Reading
	for i := 0; i <= 20; i++ {
		r := course(i)
		r.Values[0] = int64(200 * float64(i) / 10 * 1e3) // 200 W of CPU
		rs = append(rs, r)
	}
	if _, errs := judged("Mac13,2", rs...); len(errs) != 0 {
		t.Errorf("200 W on an M1 Ultra: %v", errs)
	}
	ss, errs := judged("MacBookAir10,1", rs...)
	if len(ss) > 1 || len(errs) == 0 || !strings.Contains(errs[len(errs)-1].Error(), "150 W") {
		t.Errorf("200 W on an M1 MacBook Air: %d windows, errors %v", len(ss), errs)
	}
}
