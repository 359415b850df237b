package wire

import (
	"encoding/json"
	"math"
	"testing"
)

func TestNumWritesAtMost12SignificantDigits(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want string
	}{
		{0, "0"},
		{1, "1"},
		{-2.5, "-2.5"},
		{17689.4 / 1000, "17.6894"},
		{0.1 + 0.2, "0.3"},
		{1.0 / 3, "0.333333333333"},
		{123456789.123456789, "123456789.123"},
		{1e-6, "0.000001"},
		{1.5e-7, "1.5e-07"},
		{1e20, "100000000000000000000"},
		{1e21, "1e+21"},
		{-3e-9, "-3e-09"},
	} {
		got, err := json.Marshal(Num(tc.in))
		if err != nil {
			t.Errorf("Num(%v): %v", tc.in, err)
			continue
		}
		if string(got) != tc.want {
			t.Errorf("Num(%v) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestNumRefusesWhatJSONCannotWrite(t *testing.T) {
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if b, err := json.Marshal(Num(v)); err == nil {
			t.Errorf("Num(%v) = %s, want an error", v, b)
		}
	}
}

// The average over the time measured is the energy over the covered part
// of the span: at 18.6 % coverage of a Mac drawing 16.5 W, 16.5 W, where
// the energy over the whole span reads 3.069 W.
func TestMeasuredAverageIsThePowerOverTheTimeCovered(t *testing.T) {
	num := func(v Num) *Num { return &v }
	for _, tc := range []struct {
		name string
		sum  Summary
		want *Components
	}{
		{"18.6 % of 10 s measured, at 16.5 W",
			Summary{DurationSeconds: 10, Coverage: 0.186, EnergyJoules: Components{Total: 30.69, CPU: 18.6, GPU: 9.3, ANE: 2.79},
				AvgPowerWatts: Components{Total: 3.069, CPU: 1.86, GPU: 0.93, ANE: 0.279}},
			&Components{Total: 16.5, CPU: 10, GPU: 5, ANE: 1.5}},
		{"the memory and the system too, where they were read",
			Summary{DurationSeconds: 4, Coverage: 0.5, EnergyJoules: Components{Total: 20, CPU: 20, DRAM: num(4), System: num(100)}},
			&Components{Total: 10, CPU: 10, DRAM: num(2), System: num(50)}},
		{"all of it measured: the average itself",
			Summary{DurationSeconds: 2, Coverage: 1, EnergyJoules: Components{Total: 10}, AvgPowerWatts: Components{Total: 5}},
			&Components{Total: 5}},
		{"nothing measured: no power over no time",
			Summary{DurationSeconds: 2, Coverage: 0, AvgPowerWatts: Components{}}, nil},
		{"a span of no length, not covered", Summary{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.sum.MeasuredAverage()
			if (got == nil) != (tc.want == nil) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			if got == nil {
				return
			}
			g, w := got.Values().Array(), tc.want.Values().Array()
			for i := range g {
				if math.Abs(g[i]-w[i]) > 1e-9*math.Max(1, math.Abs(w[i])) {
					t.Errorf("component %d: %v, want %v", i, g[i], w[i])
				}
			}
			if got.Has() != tc.want.Has() {
				t.Errorf("reports %+v, want %+v", got.Has(), tc.want.Has())
			}
		})
	}
}
