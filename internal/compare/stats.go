package compare

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Sample is what one export says of one figure of one benchmark: its
// values' count, mean and spread, and the part of its mean's error that
// more values do not shrink (the idle baseline's, which shifts every
// value of a bench alike), in the figure's unit.
type Sample struct {
	N    int
	Mean float64
	// SD is the values' standard deviation (n-1); NaN for fewer than
	// two.
	SD float64
	// Shared is the standard error that every value shares: the idle
	// power's standard error over the values' mean duration, for a net
	// figure; 0 for a gross one. SharedDOF is the degrees of freedom it
	// is read with, +Inf where it is taken as known.
	Shared, SharedDOF float64
}

// meanVariance is the variance of the sample's mean: its values'
// spread over their count, and the shared error's square.
func (s Sample) meanVariance() float64 {
	return s.SD*s.SD/float64(s.N) + s.Shared*s.Shared
}

// Test is the outcome of Welch's t-test of two samples' means.
type Test struct {
	// T is the difference of the means (new less old) over its standard
	// error; DF the Welch–Satterthwaite degrees of freedom; P the
	// two-sided p-value. T is ±Inf and P 0 where the two means differ
	// and neither has any spread; T is 0 and P 1 where they do not.
	T, DF, P float64
	// SE is the difference's standard error.
	SE float64
}

// Welch is Welch's t-test of the means of old and new, unequal variances,
// as scipy.stats.ttest_ind(equal_var=False) and hyperfine's
// scripts/welch_ttest.py do it: t = (m₂ − m₁) / √(v₁ + v₂), where vᵢ is
// the variance of mean i, with the Welch–Satterthwaite degrees of freedom.
// Each side's shared error (Sample.Shared) is added to its mean's
// variance as one more part of the Satterthwaite sum, with its own
// degrees of freedom; with none, this is scipy's test exactly. Both
// samples need two values or more (DF is NaN otherwise).
func Welch(old, new Sample) Test {
	if old.N < 2 || new.N < 2 || math.IsNaN(old.SD) || math.IsNaN(new.SD) {
		return Test{T: math.NaN(), DF: math.NaN(), P: math.NaN(), SE: math.NaN()}
	}
	va, vb := old.meanVariance(), new.meanVariance()
	v := va + vb
	d := new.Mean - old.Mean
	if !(v > 0) {
		if d == 0 {
			return Test{T: 0, DF: math.NaN(), P: 1}
		}
		return Test{T: math.Copysign(math.Inf(1), d), DF: math.NaN(), P: 0}
	}
	// Each part of the variance over its degrees of freedom, squared:
	// the Satterthwaite sum.
	part := func(x, dof float64) float64 {
		if math.IsInf(dof, 1) || x == 0 {
			return 0
		}
		return x * x / dof
	}
	sa, sb := old.SD*old.SD/float64(old.N), new.SD*new.SD/float64(new.N)
	den := part(sa, float64(old.N-1)) + part(sb, float64(new.N-1)) +
		part(old.Shared*old.Shared, old.SharedDOF) + part(new.Shared*new.Shared, new.SharedDOF)
	dof := math.Inf(1)
	if den > 0 {
		dof = v * v / den
	}
	se := math.Sqrt(v)
	t := d / se
	return Test{T: t, DF: dof, P: 2 * tCDF(-math.Abs(t), dof), SE: se}
}

// tCDF is Student's t distribution function with dof degrees of freedom
// at t; the normal distribution's where dof is infinite.
func tCDF(t, dof float64) float64 {
	if math.IsInf(dof, 1) {
		return distuv.UnitNormal.CDF(t)
	}
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: dof}.CDF(t)
}

// tQuantile is the p quantile of Student's t distribution with dof
// degrees of freedom; the normal distribution's where dof is infinite.
func tQuantile(p, dof float64) float64 {
	if math.IsInf(dof, 1) {
		return distuv.UnitNormal.Quantile(p)
	}
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: dof}.Quantile(p)
}

// Interval is a confidence interval of the ratio new/old of two means.
type Interval struct {
	Low, High float64
	// Bounded is false where the old mean cannot be told from zero at
	// the interval's level: the ratio may then be anything, and Low and
	// High are NaN.
	Bounded bool
}

// Fieller is the 1−alpha confidence interval of the ratio of new's mean
// to old's by Fieller's theorem, for independent means: the ratios ρ
// for which new − ρ·old is within q standard errors of 0,
// (m₂ − ρm₁)² ≤ q²(v₂ + ρ²v₁), with q the two-sided quantile of Student's
// t at dof (the Welch test's degrees of freedom). With that same q, 1
// is outside the interval exactly when the test finds the means differ
// at alpha: the interval and the test never disagree. The interval is
// bounded only where the old mean is itself more than q standard errors
// from zero.
func Fieller(old, new Sample, dof, alpha float64) Interval {
	none := Interval{Low: math.NaN(), High: math.NaN()}
	if math.IsNaN(dof) {
		return none
	}
	q := tQuantile(1-alpha/2, dof)
	va, vb := old.meanVariance(), new.meanVariance()
	ma, mb := old.Mean, new.Mean
	// The quadratic a·ρ² − 2·ma·mb·ρ + c ≤ 0.
	a := ma*ma - q*q*va
	c := mb*mb - q*q*vb
	if !(a > 0) {
		return none
	}
	disc := math.Sqrt(math.Max(0, ma*ma*mb*mb-a*c))
	return Interval{Low: (ma*mb - disc) / a, High: (ma*mb + disc) / a, Bounded: true}
}

// MeanInterval is the 1−alpha confidence interval of s's mean, by
// Student's t with its values' degrees of freedom (the shared error's
// added by Satterthwaite, as in Welch); NaN for fewer than two values.
func MeanInterval(s Sample, alpha float64) (low, high float64) {
	if s.N < 2 || math.IsNaN(s.SD) {
		return math.NaN(), math.NaN()
	}
	v := s.meanVariance()
	sv := s.SD * s.SD / float64(s.N)
	den := sv * sv / float64(s.N-1)
	if !math.IsInf(s.SharedDOF, 1) && s.Shared > 0 {
		den += math.Pow(s.Shared, 4) / s.SharedDOF
	}
	dof := math.Inf(1)
	if den > 0 {
		dof = v * v / den
	}
	h := tQuantile(1-alpha/2, dof) * math.Sqrt(v)
	return s.Mean - h, s.Mean + h
}
