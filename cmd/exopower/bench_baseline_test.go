package main

import (
	"math"
	"testing"

	"github.com/exopower/exopower/internal/bench"
)

// spansOf counts an idle span's pieces, 0 for none.
func spansOf(i *bench.Idle) int {
	if i == nil {
		return 0
	}
	return i.Spans
}

// wallSeconds is the runs' time in all.
func wallSeconds(rep *bench.Report) float64 {
	var s float64
	for _, r := range rep.Results {
		for _, run := range r.Runs {
			s += float64(run.WallSeconds)
		}
	}
	return s
}

// --baseline auto measures the idle Mac as long as the runs need: at a
// steady power, a piece of half a second before the runs and one after,
// less than half the time the runs take (so that the bench, runs and
// baseline, takes less than one and a half times the runs), where a fixed
// 5 s before and after took four times as long as the runs.
func TestTheAutoBaselineOfASteadyMacIsAPieceEach(t *testing.T) {
	t.Parallel()
	rep := benchJSON(t, "0=3,1,0.5", "-r", "3", "sleep 0.3", "sleep 0.5")
	b := rep.Baseline
	if b == nil || spansOf(b.Before) != 1 || spansOf(b.After) != 1 || b.Between != nil {
		t.Fatalf("baseline %+v: want a piece before and a piece after", b)
	}
	if idle, runs := float64(b.DurationSeconds), wallSeconds(rep); idle > runs/2 {
		t.Errorf("%.3f s of idle for %.3f s of runs: more than half", idle, runs)
	}
	if math.Abs(float64(b.PowerWatts)-4.5) > 0.01 || b.StandardErrorWatts == nil {
		t.Errorf("idle power %v ± %v, want 4.5 W and an error", b.PowerWatts, b.StandardErrorWatts)
	}
}

// Runs that each cover a whole period of a square wave are alike, but
// pieces of half a second of a wave of 1 s, high half of it, differ:
// the idle power's error stays above what the runs need, and the span
// after goes on to its most, 5 s, ten pieces. (With a wave of 0.7 s,
// high for 0.35 s, a piece of 0.5 s held all of the high part for 0.15 s
// of every 0.7 s of phases, and all of the low part as long: two pieces
// read the same power one time in eleven, and were enough. Half a period
// long, no two pieces agree but by starting within a millisecond of
// the same phase, or of its mirror.)
func TestTheAutoBaselineOfANoisyMacGoesOnToItsMost(t *testing.T) {
	t.Parallel()
	rep := benchJSON(t, "period=1 0=2,0,0 0.5=20,0,0", "-r", "3", "sleep 1")
	b := rep.Baseline
	if b == nil || spansOf(b.Before) != 1 || spansOf(b.After) != 10 {
		t.Fatalf("baseline %+v: want a piece before and ten after", b)
	}
	if after := float64(b.After.DurationSeconds); math.Abs(after-5) > 0.05 {
		t.Errorf("%.3f s after the runs, want 5 s", after)
	}
}

// With --cooldown the latter half of each cooldown is measured too, in
// whole pieces: three runs, two cooldowns of a second, a piece each. A
// fixed --baseline is measured as it says, before and after, and not
// in the cooldowns.
func TestTheBaselineInTheCooldownsAndAFixedOne(t *testing.T) {
	t.Parallel()
	rep := benchJSON(t, "0=3,1,0.5", "-r", "3", "--cooldown", "1s", "sleep 0.1")
	if b := rep.Baseline; b == nil || spansOf(b.Between) != 2 || math.Abs(float64(b.Between.DurationSeconds)-1) > 0.01 {
		t.Errorf("baseline %+v: want two pieces between the runs, 1 s", b)
	}
	rep = benchJSON(t, "0=3,1,0.5", "-r", "2", "--cooldown", "1s", "--baseline", "1.5s", "sleep 0.1")
	b := rep.Baseline
	if b == nil || spansOf(b.Before) != 3 || spansOf(b.After) != 3 || b.Between != nil {
		t.Fatalf("baseline %+v: want three pieces before and after, none between", b)
	}
	for _, sp := range []*bench.Idle{b.Before, b.After} {
		if math.Abs(float64(sp.DurationSeconds)-1.5) > 0.01 {
			t.Errorf("a span of %v s, want exactly 1.5 s", sp.DurationSeconds)
		}
	}
}
