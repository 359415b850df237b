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
