package main

import (
	"math"
	"slices"
)

// spread is what a benchmark reports of a set of ratios: the median, the
// interval that holds the true median at 95 % or more, and the extremes.
type spread struct {
	min, lo, median, hi, max float64
	// coverage is the interval's confidence (0.979 for 10 values), 0
	// where there are too few values for 95 % (fewer than 6): lo and hi
	// are then min and max.
	coverage float64
}

// spreadOf is the spread of xs, which must not be empty. The interval is
// the distribution-free one of order statistics: the k-th smallest and
// k-th largest values, with k the largest for which both the true median
// lies below the k-th smallest with probability at most 2.5 %, and above
// the k-th largest likewise; it assumes only independent values, not
// a shape of their distribution, which a shared machine's noise lacks.
func spreadOf(xs []float64) spread {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	sp := spread{min: s[0], max: s[n-1], lo: s[0], hi: s[n-1], median: median(s)}
	k, tail := 0, 0.0
	for j := 0; j < n/2; j++ {
		// tail+binom(n, j)/2^n is P(fewer than j+1 of the n values are
		// below the median).
		t := tail + binomialHalf(n, j)
		if t > 0.025 {
			break
		}
		k, tail = j+1, t
	}
	if k > 0 {
		sp.lo, sp.hi, sp.coverage = s[k-1], s[n-k], 1-2*tail
	}
	return sp
}

// median is the median of sorted values.
func median(s []float64) float64 {
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// binomialHalf is the probability of j successes in n trials of 1/2.
func binomialHalf(n, j int) float64 {
	lg := func(x int) float64 { v, _ := math.Lgamma(float64(x + 1)); return v }
	return math.Exp(lg(n) - lg(j) - lg(n-j) - float64(n)*math.Ln2)
}
