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

// steady is a course of the simple plan at watts (CPU, GPU, ANE, DRAM)
// and a system of 30 W, its i-th reading at i × 100 ms, from a boot of
// three days before.
func steady(watts [rails]float64) func(i int) Reading {
	return func(i int) Reading {
		s := boot + float64(i)/10
		return Reading{At: at(float64(i) * 100), Values: []int64{int64(watts[0] * s * 1e3), int64(watts[1] * s * 1e9), int64(watts[2] * s * 1e3), int64(watts[3] * s * 1e3)},
			System: systemW, HasSystem: true, Line: i + 2}
	}
}

// peakOf is the highest power of the windows as a span's peak counts it.
func peakOf(ss []power.Sample) power.Values {
	var p power.Values
	for i := range ss {
		p = p.Max(ss[i].PeakPower())
	}
	return p
}

// Sequences of readings that cannot be true, each against what a meter
// that believes only what can be true reads of the course they spoil:
// every joule of it, no window's power beyond the Mac's, each bogus
// reading counted once on its rail, and breaks only where the counters
// truly took a new course.
func TestSequencesOfReadingsThatCannotBeTrue(t *testing.T) {
	busy := steady([rails]float64{10, 5, 0, 1})
	type want struct {
		e                      [rails]float64 // joules over the readings
		glitches, refused, brk int
	}
	for _, c := range []struct {
		name     string
		n        int
		spoil    func(i int, r *Reading)
		want     want
		maxPeak  float64 // the highest rail's peak, W
		maxSysJ  float64 // the system's energy at most, J (0: 30 W over the readings)
		sysExact bool
	}{
		// An idle GPU's one reading 8000 J up after a minute, then back
		// at its course: the still counter's allowance is its window and
		// 3 s, not the minute (9000 J at 150 W).
		{"an idle GPU's lone step", 700, func(i int, r *Reading) {
			*r = steady([rails]float64{10, 0, 0, 1})(i)
			if i == 650 {
				r.Values[1] += 8000e9
			}
		}, want{e: [rails]float64{699, 0, 0, 69.9}, glitches: 1}, 15, 0, true},
		// Two bogus zeros in a row: both dropped, no reset.
		{"two zeros in a row", 30, func(i int, r *Reading) {
			if i == 10 || i == 11 {
				r.Values[0] = 0
			}
		}, want{e: [rails]float64{29, 14.5, 0, 2.9}, glitches: 2}, 15, 0, true},
		// A true reset (to 0.1 J), then one bogus 0, then the reset's
		// course: the chain goes on from the reset's reading, not the 0.
		{"a reset, then a zero", 30, func(i int, r *Reading) {
			switch {
			case i == 11:
				r.Values[0] = 0
			case i >= 10:
				r.Values[0] = int64(100 + 1000*(i-10))
			}
		}, want{e: [rails]float64{28, 14, 0, 2.8}, glitches: 1, brk: 1}, 15, 0, false},
		// The clock six days ahead once: a bogus reading, not six days.
		{"the clock six days ahead once", 30, func(i int, r *Reading) {
			if i == 12 {
				r.At = r.At.Add(6 * 24 * time.Hour)
			}
		}, want{e: [rails]float64{29, 14.5, 0, 2.9}}, 15, 0, true},
		// The clock back twice, then on its course.
		{"the clock back twice", 30, func(i int, r *Reading) {
			if i == 12 || i == 13 {
				r.At = r.At.Add(-time.Second)
			}
		}, want{e: [rails]float64{29, 14.5, 0, 2.9}}, 15, 0, true},
		// 140 W on each of CPU, GPU and ANE of an M1: each within a rail's
		// 150 W, the SoC's 420 W beyond its 150 W.
		{"an SoC beyond its bound", 10, func(i int, r *Reading) {
			*r = steady([rails]float64{140, 140, 140, 1})(i)
		}, want{refused: 1}, 150, 0, false},
		// A reading a microsecond after the one before, a count up: one
		// count in a microsecond is no power.
		{"a reading a microsecond on", 20, func(i int, r *Reading) {
			if i == 10 {
				*r = busy(9)
				r.At = r.At.Add(time.Microsecond)
				r.Values[0]++
				r.Values[3]++
			}
		}, want{e: [rails]float64{19, 9.5, 0, 1.9}}, 15, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var rs []Reading
			for i := range c.n {
				r := busy(i)
				c.spoil(i, &r)
				rs = append(rs, r)
			}
			ss, errs := judged("MacBookPro17,1", rs...)
			e, _, glitches, notes := sum(ss)
			var refused, brk int
			for _, err := range errs {
				var be *power.BreakError
				if errors.As(err, &be) {
					brk++
				} else if _, ok := power.RailOf(err); ok {
					refused++
				}
			}
			g := 0
			for _, n := range glitches {
				g += n
			}
			if g != c.want.glitches || refused != c.want.refused || brk != c.want.brk {
				t.Errorf("%d glitches, %d refused, %d breaks (%v, notes %q); want %d, %d, %d", g, refused, brk, errs, notes, c.want.glitches, c.want.refused, c.want.brk)
			}
			if c.want.refused == 0 {
				for r := range rails {
					if math.Abs(e.Of(Rail(r))-c.want.e[r]) > 0.01 {
						t.Errorf("%v: %.4f J, want %.4f J", Rail(r), e.Of(Rail(r)), c.want.e[r])
					}
				}
			}
			p := peakOf(ss)
			for r := range rails {
				if p.Of(Rail(r)) > c.maxPeak {
					t.Errorf("%v's peak %.4g W, beyond %v W", Rail(r), p.Of(Rail(r)), c.maxPeak)
				}
			}
			if c.sysExact && math.Abs(e.System-systemW*float64(c.n-1)/10) > 1e-6 {
				t.Errorf("system %.4f J, want %.4f J", e.System, systemW*float64(c.n-1)/10)
			}
		})
	}
}

// A die's channel that moves every window is judged over its window, a
// still die's over the time it stood: a lone 50 kJ step on the moving
// die while the other stands still is dropped, not believed over the
// still one's time.
func TestEachChannelIsJudgedOverItsOwnTime(t *testing.T) {
	p := NewPlan([]Channel{{Group: Group, Name: "DIE_0_CPU Energy", Unit: "mJ"}, {Group: Group, Name: "DIE_1_CPU Energy", Unit: "mJ"},
		{Group: Group, Name: "GPU Energy", Unit: "nJ"}})
	w := newWindows(&p, "Mac13,2")
	var e float64
	var glitches int
	for i := range 600 {
		r := Reading{At: at(float64(i) * 100), Values: []int64{int64(1000 * i), 5000, int64(1e8 * i)}, Line: i + 2}
		if i == 550 {
			r.Values[0] += 5e7 // 50 kJ, under 1000 W over the still die's 55 s
		}
		w.push(r)
		for o, ok := w.pop(); ok; o, ok = w.pop() {
			e += o.s.Energy.CPU
			glitches += o.s.Rails[CPU].Glitches
			if o.err != nil || o.s.PeakPower().CPU > 11 {
				t.Errorf("%v, a peak of %v W", o.err, o.s.PeakPower().CPU)
			}
		}
	}
	if math.Abs(e-599) > 1e-9 || glitches != 1 {
		t.Errorf("CPU %v J, %d glitches: want 599 J, the step dropped once", e, glitches)
	}
}

// An idle GPU's counter that steps by 8000 J and goes on from there is a
// refused window: a counter that stood still may have accrued its
// window and 3 s at most, not all the time it stood.
func TestAnIdleRailsStepIsJudgedOverItsWindowAndABatch(t *testing.T) {
	idle := steady([rails]float64{10, 0, 0, 1})
	var rs []Reading
	for i := range 700 {
		r := idle(i)
		if i >= 650 {
			r.Values[1] += 8000e9 // under 150 W over the 65 s it stood
		}
		rs = append(rs, r)
	}
	ss, errs := judged("MacBookPro17,1", rs...)
	if rail, ok := power.RailOf(errs[0]); len(errs) != 1 || !ok || rail != GPU {
		t.Fatalf("errors %v: want the GPU's window refused", errs)
	}
	if p := peakOf(ss); p.GPU > 0 {
		t.Errorf("the GPU's peak: %v W", p.GPU)
	}
}

// A batch that lands in a window shorter than telling (a reading asked
// for 20 ms after one) is still a batch: its peak is its power over the
// time it accrued, and the system's power is not raised to it.
func TestABatchInAShortWindowIsStillABatch(t *testing.T) {
	var rs []Reading
	for _, ms := range []float64{0, 500, 1000, 1500, 1990, 2010, 2500, 3000} {
		r := course(0)
		r.At = at(ms)
		r.Values = []int64{r.Values[0] + int64(math.Floor(ms/2000))*20000, r.Values[1] + int64(gpuW*ms*1e6), 0, r.Values[3] + int64(dramW*ms)}
		rs = append(rs, r)
	}
	ss, _ := judged("MacBookPro17,1", rs...)
	e, _, _, _ := sum(ss)
	if p := peakOf(ss); p.CPU > 11 || math.Abs(e.System-systemW*3) > 1e-9 {
		t.Errorf("CPU peak %v W, system %v J: want the batch's 10 W, and 90 J", p.CPU, e.System)
	}
}

// Counters that all step together every 2 s (every rail batched) are
// batches too: the system's power is not raised to the step, and the
// peaks are the batches' powers over the time they accrued.
func TestCountersBatchedTogether(t *testing.T) {
	var rs []Reading
	for i := range 41 {
		r := course(i / 20 * 20)
		r.At = at(float64(i) * 100)
		r.Line = i + 2
		rs = append(rs, r)
	}
	ss, errs := judged("MacBookPro17,1", rs...)
	e, _, _, _ := sum(ss)
	var tally power.QuirkTally
	for i := range ss {
		tally.Add(&ss[i])
	}
	if p := peakOf(ss); len(errs) != 0 || p.CPU > 11 || math.Abs(e.System-systemW*4) > 1e-9 || tally.Windows[2] != 2 {
		t.Errorf("errors %v, CPU peak %v W, system %v J (want 120 J), %d batched windows (want 2)", errs, p.CPU, e.System, tally.Windows[2])
	}
}

// A gap of an hour (the Mac slept) that the readings after it go on from
// is a window of its own, not a break and not a dropped reading.
func TestAGapTheReadingsGoOnFromIsAWindow(t *testing.T) {
	var rs []Reading
	for i := range 20 {
		r := course(i)
		if i >= 10 {
			r.At = r.At.Add(time.Hour)
		}
		rs = append(rs, r)
	}
	ss, errs := judged("MacBookPro17,1", rs...)
	_, covered, glitches, _ := sum(ss)
	if len(errs) != 0 || covered != time.Hour+1900*time.Millisecond || glitches != [power.NumRails]int{} {
		t.Errorf("errors %v, %v covered, glitches %v: want the hour a window", errs, covered, glitches)
	}
}

// An SMC power of 1e-300 W is no power either.
func TestAnSMCPowerOfNothingIsNoSystemPower(t *testing.T) {
	z := []Reading{course(0), course(1), course(2)}
	for i := range z {
		z[i].System = 1e-300
	}
	if ss, _ := judged("", z...); len(ss) != 2 || ss[0].Has.System || ss[1].Has.System {
		t.Errorf("PSTR 1e-300 W taken for a system power: %+v", ss)
	}
}
