package bench

import (
	"math"
	"time"
)

// IdleSpan is one piece of an idle span: when it started, its length and
// average power (Window), and how many of the source's windows covered it.
type IdleSpan struct {
	Start time.Time
	Window
	Windows int
	// Wall is the piece at the wall (--wall); nil without.
	Wall *WallPiece
}

// MinIdlePiece is the shortest piece the idle Mac is measured in: long
// enough to hold the many timers that wake a Mac several times a second
// (so that a piece's power is not one of them or none), short enough
// that a few fit in a quick bench. The pieces' powers are the values
// whose spread gives the idle power's standard error: pieces this long
// are far nearer independent of each other than the source's windows of
// 100 ms, which a periodic load makes differ in step.
const MinIdlePiece = 500 * time.Millisecond

// IdlePiece is the length of the pieces the idle Mac is measured in at
// the sample interval: MinIdlePiece, or two intervals where that is
// longer, so that a piece holds at least two of the source's windows.
func IdlePiece(interval time.Duration) time.Duration {
	return max(MinIdlePiece, 2*interval)
}

// oneSE is the probability within one standard error above the mean of
// a normal distribution: StudentT(oneSE, dof) is what one standard
// error is when the spread is read from dof+1 values.
const oneSE = 0.8413447460685429

// IdleNeed is the standard error of the idle power, in watts, at which it
// adds little to any command's net energy: for each command with runs,
// half the standard error of its runs' mean energy (then the two together
// are at most 12 % more than the runs' alone), or, where more, what the
// source resolves of a run (Resolution), over its mean duration; the
// least of these. It is +Inf when no command has a run.
func IdleNeed(results []Result) float64 {
	need := math.Inf(1)
	for _, r := range results {
		if len(r.Runs) == 0 {
			continue
		}
		var e, d, p []float64
		for _, run := range r.Runs {
			e, d, p = append(e, float64(run.EnergyJoules.Total)), append(d, float64(run.DurationSeconds)), append(p, float64(run.AvgPowerWatts.Total))
		}
		secs := Summarize(d).Mean
		if !(secs > 0) {
			continue
		}
		target := Resolution(secs, Summarize(p).Mean)
		if st := Summarize(e); st.N > 1 {
			target = max(target, st.Stddev/math.Sqrt(float64(st.N))/2)
		}
		need = min(need, target/secs)
	}
	return need
}

// IdleEnough reports whether the pieces measured so far give the idle
// power as closely as need (IdleNeed) asks: their standard error, taken
// larger by Student's t for the few pieces it is read from (with two, a
// spread that small may be luck), is within it. Fewer than two pieces
// have no spread, and are never enough.
func IdleEnough(ws []Window, need float64) bool {
	if len(ws) < 2 {
		return false
	}
	_, se := weighted(ws)
	return se*StudentT(oneSE, float64(len(ws)-1)) <= need
}

// Drift reports whether the idle power before the runs and after them
// differ by more than chance would make them one time in 370 (three
// standard errors of a normal distribution), by Student's t test: the
// spread of the pieces within each span, pooled, gives the error of
// each span's mean. With fewer than three pieces in all there is no
// spread within the spans, and no drift can be told. Differences in the
// last digits of a float are none.
func Drift(before, after []Window) bool {
	mb, nb, ssb := groupStats(before)
	ma, na, ssa := groupStats(after)
	dof := nb + na - 2
	if !(dof >= 1) {
		return false
	}
	v := (ssb + ssa) / dof
	d := math.Abs(mb - ma)
	if d <= 1e-9*max(math.Abs(mb), math.Abs(ma)) {
		return false
	}
	return d > StudentT(1-0.0027/2, dof)*math.Sqrt(v/nb+v/na)
}

// groupStats are the pieces' mean power weighted by their lengths, their
// effective number ((Σw)²/Σw²), and their sum of squares about the mean
// in units of that number, such that over n-1 it is their variance.
func groupStats(ws []Window) (mean, n, ss float64) {
	var sw, sw2, swx float64
	for _, w := range ws {
		sw, sw2, swx = sw+w.Seconds, sw2+w.Seconds*w.Seconds, swx+w.Seconds*w.Watts
	}
	if !(sw > 0) {
		return math.NaN(), 0, 0
	}
	mean, n = swx/sw, sw*sw/sw2
	for _, w := range ws {
		ss += w.Seconds * (w.Watts - mean) * (w.Watts - mean)
	}
	return mean, n, ss / sw * n
}
