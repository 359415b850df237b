package bench

import (
	"math"
	"slices"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(b)) }

func TestSummarize(t *testing.T) {
	for _, c := range []struct {
		name string
		xs   []float64
		want Stats
	}{
		{"eight values have the sample's stddev and the mean of the middle two as median",
			[]float64{9, 2, 4, 4, 5, 4, 7, 5}, Stats{N: 8, Mean: 5, Stddev: math.Sqrt(32.0 / 7), Median: 4.5, Min: 2, Max: 9}},
		{"an odd count has its middle value as median",
			[]float64{3, 1, 2}, Stats{N: 3, Mean: 2, Stddev: 1, Median: 2, Min: 1, Max: 3}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Summarize(c.xs)
			if got.N != c.want.N || !near(got.Mean, c.want.Mean) || !near(got.Stddev, c.want.Stddev) ||
				!near(got.Median, c.want.Median) || got.Min != c.want.Min || got.Max != c.want.Max {
				t.Errorf("Summarize(%v) = %+v, want %+v", c.xs, got, c.want)
			}
		})
	}
}

func TestOneValueHasNoStddev(t *testing.T) {
	got := Summarize([]float64{4})
	if got.Mean != 4 || got.Median != 4 || !math.IsNaN(got.Stddev) {
		t.Errorf("Summarize([4]) = %+v, want mean and median 4 and no stddev", got)
	}
}

func TestModifiedZScores(t *testing.T) {
	got := ModifiedZScores([]float64{1, 2, 3, 4, 100}, 0)
	// median 3, deviations 2 1 0 1 97, MAD 1
	want := []float64{-2, -1, 0, 1, 97}
	for i := range want {
		if !near(got[i], want[i]) {
			t.Fatalf("ModifiedZScores = %v, want %v", got, want)
		}
	}
}

func TestOutliers(t *testing.T) {
	for _, c := range []struct {
		name string
		xs   []float64
		want []int
	}{
		{"a run far from the rest is one", []float64{1, 2, 3, 4, 100}, []int{4}},
		{"a run 14 MADs away is none", []float64{1, 2, 3, 4, 17}, nil},
		{"a run 15 MADs away is one", []float64{1, 2, 3, 4, 18}, []int{4}},
		{"with most runs alike any other run is one", []float64{10, 10, 10, 10.5}, []int{3}},
		{"runs all alike have none", []float64{7, 7, 7}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Outliers(c.xs, 0); !slices.Equal(got, c.want) {
				t.Errorf("Outliers(%v) = %v, want %v", c.xs, got, c.want)
			}
		})
	}
}

func TestRatio(t *testing.T) {
	for _, c := range []struct {
		name              string
		a, sa, b, sb      float64
		wantR, wantSigmaR float64
	}{
		{"errors of both add in quadrature, relative", 2, 0.1, 4, 0.3, 2, 2 * math.Sqrt(0.05*0.05+0.075*0.075)},
		{"exact values have an exact ratio", 5, 0, 10, 0, 2, 0},
		{"a command against itself", 3, 0.3, 3, 0.3, 1, math.Sqrt(0.02)},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, sr := Ratio(c.a, c.sa, c.b, c.sb)
			if !near(r, c.wantR) || !near(sr, c.wantSigmaR) {
				t.Errorf("Ratio = %v ± %v, want %v ± %v", r, sr, c.wantR, c.wantSigmaR)
			}
		})
	}
}

func TestWeightedMean(t *testing.T) {
	for _, c := range []struct {
		name             string
		values, weights  []float64
		wantMean, wantSE float64
	}{
		{"equal weights give s over root n", []float64{1, 2, 3}, []float64{1, 1, 1}, 2, 1 / math.Sqrt(3)},
		// sw 4, sw² 10, mean 10/4, Σw(x-m)² 3, n 1.6: var 3/4·1.6/0.6 = 2, se √(2/1.6)
		{"uneven weights count by their effective number", []float64{1, 3}, []float64{1, 3}, 2.5, math.Sqrt(1.25)},
		{"scaling the weights changes nothing", []float64{1, 3}, []float64{0.1, 0.3}, 2.5, math.Sqrt(1.25)},
		{"a constant power has no error", []float64{4, 4, 4, 4}, []float64{0.1, 0.12, 0.09, 0.11}, 4, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, se := WeightedMean(c.values, c.weights)
			if !near(m, c.wantMean) || !near(se, c.wantSE) {
				t.Errorf("WeightedMean = %v ± %v, want %v ± %v", m, se, c.wantMean, c.wantSE)
			}
		})
	}
}

func TestWeightedMeanOfOneValueHasNoError(t *testing.T) {
	m, se := WeightedMean([]float64{5}, []float64{0.1})
	if m != 5 || !math.IsNaN(se) {
		t.Errorf("WeightedMean of one = %v ± %v, want 5 and no error", m, se)
	}
}

func TestDiffer(t *testing.T) {
	for _, c := range []struct {
		name             string
		m1, se1, m2, se2 float64
		want             bool
	}{
		{"within three times the combined error", 10, 0.3, 11.4, 0.4, false},
		{"beyond three times the combined error", 10, 0.3, 11.6, 0.4, true},
		{"a float's last digits with no error", 4, 0, 4 + 1e-13, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Differ(c.m1, c.se1, c.m2, c.se2); got != c.want {
				t.Errorf("Differ = %v, want %v", got, c.want)
			}
		})
	}
}

// The MAD is taken as no less than the floor over 1.4826: with a floor of
// 1.4826 the MAD of 0.5 reads as 1.
func TestModifiedZScoresWithAFloor(t *testing.T) {
	got := ModifiedZScores([]float64{3, 3.5, 3, 2.5, 20}, 1.4826)
	// median 3, deviations 0 0.5 0 0.5 17, MAD 0.5, floored to 1
	want := []float64{0, 0.5, 0, -0.5, 17}
	for i := range want {
		if !near(got[i], want[i]) {
			t.Fatalf("ModifiedZScores = %v, want %v", got, want)
		}
	}
}

// Runs whose spread is within 1 % of their mean, or within what the
// source resolves, raise no alarm; a run far beyond still does.
func TestOutliersBeneathTheFloorAreNone(t *testing.T) {
	// Ten runs of 0.5 s at about 16.7 W within 8.28-8.50 J (σ 1.1 %):
	// their median is 8.295 J and their MAD 0.01 J, which makes the
	// three at 8.48-8.50 J 18.5-20.5 MADs away. The floor is 1 % of the
	// mean, 0.0835 J (the source resolves 0.5 mJ + 16.7 mJ), a MAD of
	// 0.0563 J: none is beyond 14.826 of those, 0.835 J.
	alike := []float64{8.28, 8.29, 8.30, 8.29, 8.28, 8.50, 8.29, 8.48, 8.30, 8.49}
	mean := Summarize(alike).Mean
	floor := SpreadFloor(mean, 0.5, mean/0.5)
	if !near(mean, 8.35) || !near(floor, 0.0835) {
		t.Fatalf("mean %v, floor %v; want 8.35 and 0.0835", mean, floor)
	}
	for _, c := range []struct {
		name  string
		xs    []float64
		floor float64
		want  []int
	}{
		{"ten runs within 8.28-8.50 J", alike, floor, nil},
		{"the same without the floor, as hyperfine would", alike, 0, []int{5, 7, 9}},
		{"a run that used 12 J among them", append(slices.Clone(alike[:9]), 12), floor, []int{9}},
		{"runs a millijoule apart of a short command, within the resolution", []float64{0.050, 0.050, 0.050, 0.051, 0.050}, SpreadFloor(0.0502, 0.01, 5), nil},
		// 10 ms at 5 W is known to 5 mJ, a tenth of it: twice its
		// energy is ten of those away, three times is beyond.
		{"a run of twice the energy of a short command", []float64{0.050, 0.050, 0.050, 0.100, 0.050}, SpreadFloor(0.06, 0.01, 5), nil},
		{"a run of three times the energy of a short command", []float64{0.050, 0.050, 0.050, 0.150, 0.050}, SpreadFloor(0.07, 0.01, 5), []int{3}},
	} {
		if got := Outliers(c.xs, c.floor); !slices.Equal(got, c.want) {
			t.Errorf("%s: Outliers = %v, want %v", c.name, got, c.want)
		}
	}
	if got := Resolution(0.01, 5); !near(got, 0.00501) {
		t.Errorf("Resolution of 10 ms at 5 W = %v, want 0.00501 J", got)
	}
}

// Student's t quantiles as the tables give them.
func TestStudentT(t *testing.T) {
	for _, c := range []struct {
		p, dof, want float64
	}{
		{0.975, 1, 12.7062}, {0.975, 2, 4.3027}, {0.975, 10, 2.2281}, {0.975, 1e6, 1.9600},
		{0.8413447, 1, 1.8373}, {0.8413447, 2, 1.3213}, {0.8413447, 1e6, 1.0000},
		{0.99865, 1, 235.78}, {0.99865, 4, 6.6201}, {0.5, 3, 0},
	} {
		if got := StudentT(c.p, c.dof); math.Abs(got-c.want) > 1e-4*max(1, c.want) {
			t.Errorf("StudentT(%v, %v) = %.5f, want %v", c.p, c.dof, got, c.want)
		}
	}
	if !math.IsNaN(StudentT(0.9, 0)) {
		t.Errorf("StudentT with no degree of freedom is a number")
	}
}
