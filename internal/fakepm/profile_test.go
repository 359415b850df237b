package fakepm

import (
	"math"
	"testing"
	"time"
)

// The ground truth of every accuracy test is Profile.Energy: it is checked
// here against a plain sum of the profile's power over 10 µs steps.
func TestEnergyMatchesASumOfThePower(t *testing.T) {
	p, err := ParseProfile(DefaultProfile)
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 3, 1, 12, 0, 0, 7, time.UTC)
	spans := [][2]time.Duration{
		{0, 10 * time.Millisecond},
		{290 * time.Millisecond, 310 * time.Millisecond}, // across a step
		{123 * time.Millisecond, 2345 * time.Millisecond},
		{499 * time.Millisecond, 501 * time.Millisecond}, // across a period
	}
	const step = 10 * time.Microsecond
	for _, sp := range spans {
		from, to := base.Add(sp[0]), base.Add(sp[1])
		var sum Watts
		for t := from; t.Before(to); t = t.Add(step) {
			w := p.At(t.Add(step / 2))
			for i := range sum {
				sum[i] += w[i] * step.Seconds()
			}
		}
		got := p.Energy(from, to)
		for i := range sum {
			// The sum errs by at most one step at each of the steps it crosses.
			if math.Abs(got[i]-sum[i]) > 1e-4 {
				t.Errorf("span %v: component %d: Energy %.9f J, sum %.9f J", sp, i, got[i], sum[i])
			}
		}
	}
}

func TestEnergyOfAConstantProfile(t *testing.T) {
	p, err := ParseProfile("0=10,2,0.5")
	if err != nil {
		t.Fatal(err)
	}
	from := time.Unix(1_700_000_000, 5)
	if got := p.Energy(from, from.Add(1500*time.Millisecond)); got != (Watts{15, 3, 0.75}) {
		t.Errorf("Energy = %v, want [15 3 0.75]", got)
	}
}

func TestParseProfileRefusesNonsense(t *testing.T) {
	for _, s := range []string{"", "period=0 0=1,1,1", "0=1,1", "1=1,1,1", "0=1,1,1 0.2=2,2,2", "period=0.5 0=1,1,1 0.6=1,1,1", "0=-1,0,0", "x"} {
		if _, err := ParseProfile(s); err == nil {
			t.Errorf("ParseProfile(%q) took it", s)
		}
	}
}

// EnergyLate finds the delay by which a meter's timeline trailed the
// profile, up to the most it is given, and no further: an early meter, or
// one later than that, is held to the energy at the end of the range.
func TestEnergyLateFindsTheDelayWithinItsRange(t *testing.T) {
	p, err := ParseProfile("period=0.9 0=5,2,1 0.5=14,6,2.5")
	if err != nil {
		t.Fatal(err)
	}
	// From 0.1 s into a period (5, 2, 1 W) to 0.8 s into one (14, 6,
	// 2.5 W): a late meter reads less.
	from := time.Unix(0, 2_000_000_000*900_000_000+100_000_000)
	to := from.Add(2500 * time.Millisecond)
	for _, c := range []struct {
		late, most, want time.Duration
	}{
		{0, 40 * time.Millisecond, 0},
		{15 * time.Millisecond, 40 * time.Millisecond, 15 * time.Millisecond},
		{40 * time.Millisecond, 40 * time.Millisecond, 40 * time.Millisecond},
		{60 * time.Millisecond, 40 * time.Millisecond, 40 * time.Millisecond},
		{-15 * time.Millisecond, 40 * time.Millisecond, 0},
	} {
		got := p.Energy(from.Add(-c.late), to.Add(-c.late))
		truth, d := p.EnergyLate(from, to, c.most, got)
		if d != c.want || truth != p.Energy(from.Add(-c.want), to.Add(-c.want)) {
			t.Errorf("late by %v, at most %v: found %v (%v), want %v", c.late, c.most, d, truth, c.want)
		}
		if c.late != c.want && truth == got {
			t.Errorf("late by %v, at most %v: the truth found is what was read", c.late, c.most)
		}
	}
}
