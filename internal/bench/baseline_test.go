package bench

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"
)

// The idle power is needed as closely as the command whose runs are the
// most precise for their length asks: half its runs' standard error, or
// what the source resolves of a run where that is more, over its mean
// duration.
func TestTheIdlePowerIsNeededAsCloselyAsTheRunsAsk(t *testing.T) {
	loose := Result{Runs: []Run{runOf(2, 1), runOf(4, 1)}}      // SE 1 J: 0.5 J over 1 s
	tight := Result{Runs: []Run{runOf(10, 2), runOf(10.02, 2)}} // SE 0.01 J: half is below 7 mJ, the resolution of 2 s at 5.005 W
	alone := Result{Runs: []Run{runOf(1, 0.5)}}                 // no spread: 2.5 mJ, the resolution of 0.5 s at 2 W
	for _, c := range []struct {
		what    string
		results []Result
		want    float64
	}{
		{"runs that spread", []Result{loose}, 0.5},
		// 2 mW over 2 s, and 5.005 W over 1 ms: 7.005 mJ.
		{"runs closer than the source resolves", []Result{loose, tight}, 0.0035025},
		{"one run", []Result{alone}, 0.005},
		{"no run", []Result{{}}, math.Inf(1)},
	} {
		if got := IdleNeed(c.results); math.Abs(got-c.want) > 1e-12 && got != c.want {
			t.Errorf("%s: IdleNeed = %v W, want %v W", c.what, got, c.want)
		}
	}
}

// Enough when the pieces' standard error, taken larger by Student's t for
// the few pieces it comes from (1.8373 for two), is within the need.
func TestIdlePiecesAreEnoughWhenTheirErrorIsWithinTheNeed(t *testing.T) {
	for _, c := range []struct {
		what   string
		pieces []Window
		need   float64
		want   bool
	}{
		// sd 0.001414 W, se 0.001 W, 0.0018373 W with t.
		{"two pieces 2 mW apart", []Window{pieceOf(1), pieceOf(1.002)}, 0.0035, true},
		{"the same against a need of 1.8 mW", []Window{pieceOf(1), pieceOf(1.002)}, 0.0018, false},
		{"two pieces 10 mW apart", []Window{pieceOf(1), pieceOf(1.01)}, 0.0035, false},
		{"one piece has no spread", []Window{pieceOf(1)}, 1, false},
	} {
		if got := IdleEnough(c.pieces, c.need); got != c.want {
			t.Errorf("%s: IdleEnough = %v, want %v", c.what, got, c.want)
		}
	}
}

// With --baseline auto the span before is one piece; the span after goes
// on piece by piece until the pieces give the idle power as closely as
// the runs need, and no longer than the baseline; the latter half of each
// cooldown is measured too. A fixed baseline is its length, before and
// after, in pieces.
func TestTheAutoBaselineLastsAsLongAsTheRunsNeed(t *testing.T) {
	for _, c := range []struct {
		what     string
		idle     func(k int) float64
		cooldown time.Duration
		auto     bool
		before   int
		between  int
		after    int
	}{
		{"a steady idle Mac: one piece after", func(int) float64 { return 0.5 }, 0, true, 1, 0, 1},
		// The runs' energies are 1 and 2 J over 1 s: SE 0.5 J, a need of
		// 0.25 W. Pieces 0.3 and 0.7 W by turns: with two, an error of
		// 0.2 W × 1.84 = 0.37 W; with three, 0.133 W × 1.32 = 0.18 W.
		{"a noisy idle Mac: as long as the runs need", func(k int) float64 { return 0.3 + 0.4*float64(1-k%2) }, 0, true, 1, 0, 2},
		{"a noisier idle Mac: the most, 5 s", func(k int) float64 { return float64(k%2) * 5 }, 0, true, 1, 0, 10},
		{"a cooldown of 1 s: its latter half", func(int) float64 { return 0.5 }, time.Second, true, 1, 1, 1},
		{"a fixed baseline: 5 s each", func(int) float64 { return 0.5 }, time.Second, false, 10, 0, 10},
	} {
		m := &fakeMeter{idle: c.idle}
		cfg := Config{Jobs: Jobs([]string{"true"}, "", nil, Hooks{}), Runs: 2, Baseline: 5 * time.Second, AutoBaseline: c.auto, Cooldown: c.cooldown}
		r, _ := runner(t, cfg, m)
		rep := r.Measure(context.Background())
		b := rep.Baseline
		spans := func(i *Idle) int {
			if i == nil {
				return 0
			}
			return i.Spans
		}
		if b == nil || spans(b.Before) != c.before || spans(b.Between) != c.between || spans(b.After) != c.after {
			t.Errorf("%s: pieces before %d, between %d, after %d; want %d, %d, %d (%s)", c.what,
				spans(b.Before), spans(b.Between), spans(b.After), c.before, c.between, c.after, strings.Join(m.calls, ","))
			continue
		}
		if want := 0.5 * float64(c.before+c.between+c.after); math.Abs(float64(b.DurationSeconds)-want) > 1e-9 {
			t.Errorf("%s: %v s of idle, want %v s", c.what, b.DurationSeconds, want)
		}
	}
}
