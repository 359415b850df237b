// Package bench is exopower bench: the Runner that runs each command's
// hooks, warmups and measured runs and the idle baseline, each run a span
// of a Meter (this Mac's stream, the nodes of --node, or a test's), as
// hyperfine's scheduler runs over its Executor; and the statistics of the
// runs: the summary of a command's repeated runs, outliers by modified
// Z-score, the idle baseline's mean power and its standard error, and the
// ratio of two commands' energies with its propagated error, as hyperfine
// does them for time. The statistics are pure functions: numbers in,
// numbers out.
package bench

import (
	"math"
	"slices"
)

// Stats describes a sample of numbers, in their unit.
type Stats struct {
	N      int
	Mean   float64
	Stddev float64 // the sample's (n-1); NaN for fewer than two
	Median float64
	Min    float64
	Max    float64
}

// Summarize describes xs. All fields are NaN for an empty xs.
func Summarize(xs []float64) Stats {
	st := Stats{N: len(xs), Mean: math.NaN(), Stddev: math.NaN(), Median: math.NaN(), Min: math.NaN(), Max: math.NaN()}
	if len(xs) == 0 {
		return st
	}
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	st.Mean = sum / float64(len(xs))
	if len(xs) > 1 {
		ss := 0.0
		for _, x := range xs {
			ss += (x - st.Mean) * (x - st.Mean)
		}
		st.Stddev = math.Sqrt(ss / float64(len(xs)-1))
	}
	st.Median = Median(xs)
	st.Min, st.Max = slices.Min(xs), slices.Max(xs)
	return st
}

// Median is the middle of xs, or the mean of the two middle ones; NaN
// for none. xs is left as it is.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// OutlierThreshold is the modified Z-score beyond which a run is an
// outlier, as hyperfine sets it: 1.4826 turns the median absolute
// deviation into an estimate of the standard deviation, and a run ten
// such deviations from the median is an outlier.
const OutlierThreshold = 1.4826 * 10

// ModifiedZScores are the distances of xs from their median in units of
// their median absolute deviation (MAD), as hyperfine computes them, but
// that the MAD is taken as no less than floor / 1.4826: floor is the
// least standard deviation that is more than the measurement's own
// (SpreadFloor), and 1.4826 turns a MAD into a standard deviation. Runs
// that differ by less than the measurement can tell, or than 1 % of
// their mean, then never read as far apart. A MAD of zero with a floor
// of zero (most runs alike) is taken as the smallest float above it, so
// that any run unlike the rest stands out rather than dividing by zero.
func ModifiedZScores(xs []float64, floor float64) []float64 {
	med := Median(xs)
	dev := make([]float64, len(xs))
	for i, x := range xs {
		dev[i] = math.Abs(x - med)
	}
	mad := max(Median(dev), floor/1.4826)
	if !(mad > 0) {
		mad = math.SmallestNonzeroFloat64
	}
	z := make([]float64, len(xs))
	for i, x := range xs {
		z[i] = (x - med) / mad
	}
	return z
}

// Outliers returns the indexes of the xs whose modified Z-score, with
// the MAD no less than floor / 1.4826 (see ModifiedZScores), is beyond
// OutlierThreshold: a run is one when it is more than ten standard
// deviations from the median, the spread read from the runs (their MAD)
// and never less than floor.
func Outliers(xs []float64, floor float64) []int {
	var out []int
	for i, z := range ModifiedZScores(xs, floor) {
		if math.Abs(z) > OutlierThreshold {
			out = append(out, i)
		}
	}
	return out
}

// Resolution is how finely the source measures the energy of a run of
// seconds at watts, in joules: powermetrics gives power in whole
// milliwatts and times in whole milliseconds, so a run's energy is known
// to 1 mW over its length, and to its power over a millisecond, where
// its edges fall. (A run of 0.5 s at 16.5 W: 0.5 mJ + 16.5 mJ.)
func Resolution(seconds, watts float64) float64 {
	return 0.001*math.Abs(seconds) + 0.001*math.Abs(watts)
}

// SpreadFloor is the least standard deviation of runs' energies, in
// joules, that says more than the measurement: runs of meanJoules on
// average, each of seconds at watts, that differ by 1 % of their mean or
// by the source's Resolution, whichever is larger, are alike as far as
// the measurement goes. (Ten runs within 8.28-8.50 J, σ about 1 %, are
// as alike as the Mac and the source make them.)
func SpreadFloor(meanJoules, seconds, watts float64) float64 {
	return max(0.01*math.Abs(meanJoules), Resolution(seconds, watts))
}

// Ratio is b/a with its error propagated from the errors of a and b as
// independent (hyperfine's relative speed): σr = r·√((σa/a)² + (σb/b)²).
func Ratio(a, sa, b, sb float64) (r, sr float64) {
	r = b / a
	return r, r * math.Hypot(sa/a, sb/b)
}

// WeightedMean is the mean of values weighted by weights (window
// lengths, for a time-weighted mean power), and its standard error. The
// spread is the weighted sample variance with the reliability-weights
// correction, over the effective number of values n = (Σw)²/Σw²: with
// equal weights it is the familiar s/√n. The error is NaN when n is
// below two, and both are NaN when the weights sum to zero.
func WeightedMean(values, weights []float64) (mean, stderr float64) {
	var sw, sw2, swx float64
	for i, x := range values {
		w := weights[i]
		sw += w
		sw2 += w * w
		swx += w * x
	}
	if !(sw > 0) {
		return math.NaN(), math.NaN()
	}
	mean = swx / sw
	var ss float64
	for i, x := range values {
		ss += weights[i] * (x - mean) * (x - mean)
	}
	n := sw * sw / sw2
	if len(values) < 2 || n <= 1 {
		return mean, math.NaN()
	}
	variance := ss / sw * n / (n - 1)
	return mean, math.Sqrt(variance / n)
}

// Differ reports whether two means, each with its standard error, differ
// by more than three times their combined standard error: a difference
// that chance would give about one time in 370. (Twice, one time in
// twenty, said "the Mac's background changed" of one bench in twenty at a
// constant power, from the whole millijoules' rounding alone.)
// Differences in the last digits of a float are none: two means of a
// constant power may differ there with errors of zero.
func Differ(m1, se1, m2, se2 float64) bool {
	d := math.Abs(m1 - m2)
	return d > 3*math.Hypot(se1, se2) && d > 1e-9*max(math.Abs(m1), math.Abs(m2))
}

// StudentT is the p quantile of Student's t distribution with dof
// degrees of freedom, for p in [0.5, 1): how many of its standard errors
// a mean read from few values may be off, where the spread it is read
// with is itself uncertain. StudentT(0.8413, ∞) is 1, one standard
// error of a normal distribution; with one degree of freedom it is 1.84.
// It is NaN for dof below 1.
func StudentT(p, dof float64) float64 {
	if !(dof >= 1) || !(p >= 0.5 && p < 1) {
		return math.NaN()
	}
	// Bisection on the distribution function, which rises with t.
	lo, hi := 0.0, 1.0
	for studentCDF(hi, dof) < p {
		lo, hi = hi, 2*hi
	}
	for range 100 {
		mid := (lo + hi) / 2
		if studentCDF(mid, dof) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// studentCDF is Student's t distribution function at t >= 0.
func studentCDF(t, dof float64) float64 {
	return 1 - 0.5*incompleteBeta(dof/(dof+t*t), dof/2, 0.5)
}

// incompleteBeta is the regularized incomplete beta function I_x(a, b),
// by its continued fraction (Numerical Recipes' betacf, evaluated with
// Lentz's method), on the side of x where it converges fast.
func incompleteBeta(x, a, b float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a + b)
	lb, _ := math.Lgamma(a)
	lc, _ := math.Lgamma(b)
	front := math.Exp(la - lb - lc + a*math.Log(x) + b*math.Log1p(-x))
	if x > (a+1)/(a+b+2) {
		return 1 - front*betaFraction(1-x, b, a)/b
	}
	return front * betaFraction(x, a, b) / a
}

func betaFraction(x, a, b float64) float64 {
	const tiny = 1e-300
	c, d := 1.0, 1-(a+b)*x/(a+1)
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	f := d
	for m := 1.0; m <= 300; m++ {
		for _, num := range []float64{
			m * (b - m) * x / ((a + 2*m - 1) * (a + 2*m)),
			-(a + m) * (a + b + m) * x / ((a + 2*m) * (a + 2*m + 1)),
		} {
			d = 1 + num*d
			if math.Abs(d) < tiny {
				d = tiny
			}
			c = 1 + num/c
			if math.Abs(c) < tiny {
				c = tiny
			}
			d = 1 / d
			f *= c * d
		}
		if math.Abs(c*d-1) < 1e-15 {
			break
		}
	}
	return f
}
