package main

import (
	"math"
	"testing"
)

func TestSpreadOf(t *testing.T) {
	for _, c := range []struct {
		name string
		xs   []float64
		want spread
	}{
		{
			name: "five values are too few for 95 %: the interval is their range",
			xs:   []float64{5, 1, 4, 2, 3},
			want: spread{min: 1, lo: 1, median: 3, hi: 5, max: 5},
		},
		{
			// P(0 of 6 below) = 1/64 = 0.0156; P(0 or 1) = 7/64 > 0.025.
			name: "six values give their range at 1-2/64",
			xs:   []float64{6, 1, 5, 2, 4, 3},
			want: spread{min: 1, lo: 1, median: 3.5, hi: 6, max: 6, coverage: 1 - 2.0/64},
		},
		{
			// P(0 or 1 of 10 below) = 11/1024 = 0.0107; with 2 it is
			// 56/1024 > 0.025: the 2nd and the 9th of ten.
			name: "ten values give the second and the ninth at 1-22/1024",
			xs:   []float64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1},
			want: spread{min: 1, lo: 2, median: 5.5, hi: 9, max: 10, coverage: 1 - 22.0/1024},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := spreadOf(c.xs)
			if got.min != c.want.min || got.lo != c.want.lo || got.median != c.want.median ||
				got.hi != c.want.hi || got.max != c.want.max || math.Abs(got.coverage-c.want.coverage) > 1e-12 {
				t.Errorf("spreadOf(%v) = %+v, want %+v", c.xs, got, c.want)
			}
		})
	}
}
