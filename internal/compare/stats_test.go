package compare

import (
	"math"
	"math/rand/v2"
	"testing"
)

// sample describes xs as a Sample without a shared error, as the values
// of a gross figure.
func sample(xs ...float64) Sample { return *sampleOf(xs, 0, math.Inf(1)) }

func near(t *testing.T, what string, got, want, rel float64) {
	t.Helper()
	if math.Abs(got-want) > rel*math.Abs(want) {
		t.Errorf("%s %.15g, want %.15g (within %g of it)", what, got, want, rel)
	}
}

// Welch's t-test against scipy's: the reference values were computed
// once with Debian's python3-scipy 1.10.1,
//
//	r = scipy.stats.ttest_ind(new, old, equal_var=False)
//	va, vb = old.var(ddof=1)/len(old), new.var(ddof=1)/len(new)
//	df = (va+vb)**2 / (va**2/(len(old)-1) + vb**2/(len(new)-1))
//
// (scipy 1.10's result has no df; its p-value is 2·t.sf(|t|, df) of
// that df, which was checked there too), and are written here as they
// printed.
func TestWelchIsScipysTest(t *testing.T) {
	for _, c := range []struct {
		name        string
		old, new    []float64
		t, p, df    float64
		pRelTolance float64
	}{
		{"a textbook pair", []float64{1, 2, 3, 4, 5}, []float64{2, 4, 6, 8, 10, 12},
			2.3763541031440183, 0.04928433820673049, 6.9722557297949335, 1e-9},
		{"energies 10 % apart, far beyond chance",
			[]float64{1.388, 1.391, 1.385, 1.394, 1.381, 1.389, 1.390, 1.387, 1.386, 1.392},
			[]float64{1.527, 1.531, 1.522, 1.529, 1.535, 1.524, 1.528, 1.530, 1.526, 1.533},
			80.85471901864008, 1.868616177691696e-24, 17.94917073983832, 1e-6},
		{"close means, unequal counts", []float64{10.1, 9.8, 10.4, 10.0, 9.7, 10.3, 10.2, 9.9}, []float64{10.3, 10.0, 10.6, 9.9, 10.4, 10.5, 10.1},
			1.5689051643213194, 0.14179489972978895, 12.41496866592878, 1e-9},
		{"unequal spreads", []float64{5.0, 5.1, 4.9, 5.0, 5.2}, []float64{4.0, 6.5, 5.5, 3.9, 7.1, 5.8, 4.4, 6.0, 5.2},
			0.903522268763032, 0.39171650517381984, 8.300203979435343, 1e-9},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Welch(sample(c.old...), sample(c.new...))
			near(t, "t", got.T, c.t, 1e-12)
			near(t, "degrees of freedom", got.DF, c.df, 1e-12)
			near(t, "p", got.P, c.p, c.pRelTolance)
		})
	}
}

// The quantiles that the confidence intervals are made with are Student's
// t's: scipy.stats.t.ppf(0.975, df) and ppf(0.995, df), computed once
// with scipy 1.10.1 (for one degree of freedom they are tan(π(p−½)),
// 12.7062 and 63.6567, in every table).
func TestQuantilesAreStudentsT(t *testing.T) {
	for _, c := range []struct{ df, q975, q995 float64 }{
		{1, 12.706204736432095, 63.65674116287399},
		{2.5, 3.5746548420118773, 7.16372813402124},
		{10, 2.2281388519649385, 3.169272667175838},
		{30.5, 2.04086944518632, 2.746967063704571},
		{1000, 1.9623390808264074, 2.580754698065942},
	} {
		// gonum inverts the incomplete beta function to some 1e-9.
		near(t, "t quantile 0.975", tQuantile(0.975, c.df), c.q975, 1e-8)
		near(t, "t quantile 0.995", tQuantile(0.995, c.df), c.q995, 1e-8)
	}
	near(t, "the normal's 0.975 quantile at infinite degrees", tQuantile(0.975, math.Inf(1)), 1.959963984540054, 1e-12)
}

// draw is n values of a normal distribution of mean m and deviation sd.
func draw(r *rand.Rand, n int, m, sd float64) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = m + sd*r.NormFloat64()
	}
	return xs
}

// alarms counts, over pairs of samples drawn from the same distribution
// (nothing changed), how often the test says they differ at alpha.
// within says whether that count is within four standard deviations of
// a binomial count of alpha: a test whose rate were alpha would fall
// outside one time in 16,000.
func within(alarms, pairs int, alpha float64) bool {
	mean := float64(pairs) * alpha
	return math.Abs(float64(alarms)-mean) <= 4*math.Sqrt(mean*(1-alpha))
}

// Over pairs of benches of a command that did not change, Welch's test
// raises an alarm at the rate alpha promises, however unequal the
// spreads of the two; with as few as three runs a side it is
// conservative (scipy's test gives 0.0053 at alpha 0.01 over 100,000
// such pairs), never above alpha. The comparison with a threshold of 0
// has the test's verdicts.
func TestUnchangedPairsRaiseAlarmsAtAlpha(t *testing.T) {
	const pairs = 4000
	for _, c := range []struct {
		name         string
		nOld, nNew   int
		sdOld, sdNew float64
		alpha        float64
		// atMost: the test may raise fewer alarms than alpha's rate.
		atMost bool
	}{
		{"ten runs each, alike", 10, 10, 0.02, 0.02, 0.05, false},
		{"five runs against twelve, spreads 1 to 3", 5, 12, 0.01, 0.03, 0.05, false},
		{"ten runs each, alpha 0.01", 10, 10, 0.05, 0.05, 0.01, false},
		{"three runs each, alpha 0.01", 3, 3, 0.05, 0.05, 0.01, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(c.nOld*100+c.nNew)))
			o := Options{Alpha: c.alpha, Threshold: 0, FailOn: FailChanged}
			alarms, verdicts := 0, 0
			for range pairs {
				a, b := sample(draw(r, c.nOld, 1, c.sdOld)...), sample(draw(r, c.nNew, 1, c.sdNew)...)
				if Welch(a, b).P < c.alpha {
					alarms++
				}
				if v := o.verdict(o.test(a, b, "old", "new"), "energy", "energy", "J", nil).Verdict; v == Regressed || v == Improved {
					verdicts++
				}
			}
			t.Logf("%d alarms in %d pairs (%.4f), alpha %v", alarms, pairs, float64(alarms)/pairs, c.alpha)
			switch {
			case c.atMost && float64(alarms) > pairs*c.alpha && !within(alarms, pairs, c.alpha):
				t.Errorf("%d alarms in %d unchanged pairs: above the rate %v that alpha promises", alarms, pairs, c.alpha)
			case !c.atMost && !within(alarms, pairs, c.alpha):
				t.Errorf("%d alarms in %d unchanged pairs: not the rate %v that alpha promises", alarms, pairs, c.alpha)
			}
			if verdicts != alarms {
				t.Errorf("%d pairs regressed or improved at a threshold of 0, the test found %d", verdicts, alarms)
			}
		})
	}
}

// A net figure's values all share the idle baseline's error: each bench
// draws its own baseline, which shifts all its runs alike. Left out of
// the test, it would raise alarms far more often than alpha; added to
// each side's variance, the test keeps its promise.
func TestTheBaselinesSharedErrorKeepsTheAlarmsAtAlpha(t *testing.T) {
	const pairs, n, sd, shared, alpha = 4000, 10, 0.01, 0.01, 0.05
	r := rand.New(rand.NewPCG(2, 3))
	withShared, without := 0, 0
	for range pairs {
		a := *sampleOf(draw(r, n, 1+shared*r.NormFloat64(), sd), shared, math.Inf(1))
		b := *sampleOf(draw(r, n, 1+shared*r.NormFloat64(), sd), shared, math.Inf(1))
		if Welch(a, b).P < alpha {
			withShared++
		}
		a.Shared, b.Shared = 0, 0
		if Welch(a, b).P < alpha {
			without++
		}
	}
	t.Logf("alarms: %d with the shared error, %d without, in %d pairs", withShared, without, pairs)
	if !within(withShared, pairs, alpha) {
		t.Errorf("%d alarms in %d unchanged pairs with the baseline's error: not alpha's rate", withShared, pairs)
	}
	if float64(without) < 4*alpha*pairs {
		t.Errorf("%d alarms without the baseline's error: the test should need it, here by far", without)
	}
}

// Fieller's interval is the set of ratios ρ with (m₂ − ρm₁)² ≤ q²(v₂ +
// ρ²v₁): its bounds solve the equality, ρ̂ lies inside, and 1 lies
// outside exactly when Welch's test finds the means differ at alpha.
func TestFiellersIntervalIsItsDefinitionAndAgreesWithTheTest(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 5))
	for i := range 2000 {
		a := sample(draw(r, 3+i%8, 1, 0.05)...)
		b := sample(draw(r, 3+i%5, 1+0.02*r.NormFloat64(), 0.05)...)
		test := Welch(a, b)
		ci := Fieller(a, b, test.DF, 0.05)
		if !ci.Bounded {
			t.Fatalf("pair %d: unbounded, with an old mean of %v ± %v", i, a.Mean, a.SD)
		}
		q := tQuantile(0.975, test.DF)
		for _, rho := range []float64{ci.Low, ci.High} {
			lhs := math.Pow(b.Mean-rho*a.Mean, 2)
			rhs := q * q * (b.SD*b.SD/float64(b.N) + rho*rho*a.SD*a.SD/float64(a.N))
			if math.Abs(lhs-rhs) > 1e-9*rhs {
				t.Fatalf("pair %d: bound %v: (m₂−ρm₁)² = %v, q²(v₂+ρ²v₁) = %v", i, rho, lhs, rhs)
			}
		}
		if ratio := b.Mean / a.Mean; ratio < ci.Low || ratio > ci.High {
			t.Fatalf("pair %d: ratio %v outside [%v, %v]", i, ratio, ci.Low, ci.High)
		}
		if excludes := 1 < ci.Low || 1 > ci.High; excludes != (test.P < 0.05) {
			t.Fatalf("pair %d: interval [%v, %v] and p = %v disagree", i, ci.Low, ci.High, test.P)
		}
	}
}

// Over many pairs whose true ratio is 1.1, Fieller's 95 % interval holds
// it about 95 % of the time.
func TestFiellersIntervalCoversTheTrueRatio(t *testing.T) {
	const pairs, alpha = 4000, 0.05
	r := rand.New(rand.NewPCG(6, 7))
	missed := 0
	for range pairs {
		a, b := sample(draw(r, 6, 2, 0.1)...), sample(draw(r, 9, 2.2, 0.3)...)
		ci := Fieller(a, b, Welch(a, b).DF, alpha)
		if !ci.Bounded || 1.1 < ci.Low || 1.1 > ci.High {
			missed++
		}
	}
	t.Logf("missed the true ratio in %d of %d pairs", missed, pairs)
	if !within(missed, pairs, alpha) {
		t.Errorf("the 95 %% interval missed the true ratio in %d of %d pairs: not about 5 %%", missed, pairs)
	}
}

// Where the old mean cannot be told from zero, the ratio may be
// anything: the interval is unbounded.
func TestFiellersIntervalIsUnboundedWhereTheOldMeanMayBeZero(t *testing.T) {
	a, b := sample(-0.01, 0.02, 0.0, 0.01), sample(1.0, 1.1, 0.9, 1.05)
	if ci := Fieller(a, b, Welch(a, b).DF, 0.05); ci.Bounded {
		t.Errorf("interval %+v over an old mean of %v ± %v, want unbounded", ci, a.Mean, a.SD)
	}
}

// Two samples without any spread: the test is certain either way.
func TestWelchWithoutSpread(t *testing.T) {
	if got := Welch(sample(2, 2, 2), sample(2, 2)); got.P != 1 || got.T != 0 {
		t.Errorf("equal constant samples: %+v, want t = 0, p = 1", got)
	}
	if got := Welch(sample(2, 2, 2), sample(3, 3)); got.P != 0 || !math.IsInf(got.T, 1) {
		t.Errorf("differing constant samples: %+v, want t = +Inf, p = 0", got)
	}
	if got := Welch(sample(2), sample(3, 3)); !math.IsNaN(got.P) {
		t.Errorf("one value: %+v, want no test", got)
	}
}

// The mean's interval is Student's: mean ± t(0.975, n−1)·s/√n.
func TestMeanIntervalIsStudents(t *testing.T) {
	s := sample(1, 2, 3, 4, 5)
	lo, hi := MeanInterval(s, 0.05)
	// t(0.975, 4) = 2.7764451051977987 (scipy), s = √2.5.
	h := 2.7764451051977987 * math.Sqrt(2.5/5)
	near(t, "low", lo, 3-h, 1e-12)
	near(t, "high", hi, 3+h, 1e-12)
}
