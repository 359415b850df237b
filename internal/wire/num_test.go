package wire

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// numSlow is Num's text as its definition gives it: rounded to 12
// significant digits, then the shortest decimal of the float that is,
// plain but for the smallest and largest. AppendNum gets there without
// parsing; the two are held equal.
func numSlow(v float64) string {
	v, _ = strconv.ParseFloat(strconv.FormatFloat(v, 'g', 12, 64), 64)
	if v != 0 && (math.Abs(v) < 1e-6 || math.Abs(v) >= 1e21) {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

func checkNum(t *testing.T, v float64) {
	t.Helper()
	got, err := AppendNum([]byte("x"), Num(v))
	if err != nil {
		t.Fatalf("%v: %v", v, err)
	}
	if want := "x" + numSlow(v); string(got) != want {
		t.Fatalf("%v (%b): got %s, want %s", v, v, got, want)
	}
}

func TestAppendNumWritesNumsDefinition(t *testing.T) {
	edges := []float64{0, math.Copysign(0, -1), 1, -1, 10, 100, 1e20, 1e21, 9.999999999995e20, 9.9999999999949e20,
		1e-6, 9.999999999995e-7, 9.9999999999949e-7, 1e-7, 5e-324, -5e-324, math.MaxFloat64, math.SmallestNonzeroFloat64,
		17.689400000000003, 0.1 + 0.2, 999999999999.5, 999999999999.4, 123456789012345, 0.000123456789012345, 2.5e-9,
		1.5, 0.5, 2.675, 1e15, 1.0000000000005, 99.9999999999951, 0.0000099999999999951}
	for _, v := range edges {
		checkNum(t, v)
		checkNum(t, -v)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 200000 {
		if v := math.Float64frombits(rng.Uint64()); !math.IsNaN(v) && !math.IsInf(v, 0) {
			checkNum(t, v)
		}
		checkNum(t, (rng.Float64()-0.5)*math.Pow(10, float64(rng.IntN(44)-22)))
		checkNum(t, math.Round(rng.Float64()*1e6)/math.Pow(10, float64(rng.IntN(12))))
	}
}

func FuzzAppendNum(f *testing.F) {
	for _, v := range []float64{17.6894, 1e-7, 9.9999999999949e20, 999999999999.5} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v float64) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			if _, err := AppendNum(nil, Num(v)); err == nil {
				t.Fatalf("%v written", v)
			}
			return
		}
		checkNum(t, v)
	})
}

func BenchmarkAppendNum(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	vs := make([]float64, 1024)
	for i := range vs {
		vs[i] = rng.Float64() * 40
	}
	var buf []byte
	b.Run("AppendNum", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			buf, _ = AppendNum(buf[:0], Num(vs[i%len(vs)]))
		}
	})
	b.Run("format-parse-format", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			buf = append(buf[:0], numSlow(vs[i%len(vs)])...)
		}
	})
}
