package bench

import (
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/wire"
)

func TestUnitsFromReadsTheFirstGroupOfTheFirstMatch(t *testing.T) {
	re := regexp.MustCompile(`generated (\S+) tokens`)
	for _, tt := range []struct {
		name, out string
		want      float64
		ok        bool
	}{
		{"a count", "loading\ngenerated 512 tokens in 3 s\n", 512, true},
		{"the first of two", "generated 7 tokens\ngenerated 9 tokens\n", 7, true},
		{"thousands separated", "generated 1,024 tokens\n", 1024, true},
		{"a fraction", "generated 2.5 tokens\n", 2.5, true},
		{"no match", "done\n", 0, false},
		{"no number", "generated many tokens\n", 0, false},
		{"zero", "generated 0 tokens\n", 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := UnitsFrom(re, []byte(tt.out))
			if got != tt.want || ok != tt.ok {
				t.Errorf("UnitsFrom(%q) = %v, %v; want %v, %v", tt.out, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestEnergyPerUnitOverTheRunsWithUnits(t *testing.T) {
	withUnits := func(r Run, u float64) Run {
		n := wire.Num(u)
		r.Units = &n
		return r
	}
	unit := "token"
	rep := NewReport(100 * time.Millisecond)
	rep.Unit = &unit
	// 2 J / 100 and 3 J / 200: 0.02 and 0.015 J/token, 50 and 66.67 tokens/J.
	rep.Results = []Result{{Command: "gen", Runs: []Run{withUnits(runOf(2, 1), 100), withUnits(runOf(3, 1), 200), runOf(4, 1)}}}
	rep.Finish(-1)
	r := rep.Results[0]
	if r.EnergyPerUnitJoules == nil || r.UnitsPerJoule == nil {
		t.Fatalf("no per-unit statistics: %+v", r)
	}
	check := func(what string, got, want float64) {
		if math.Abs(got-want) > 1e-12 {
			t.Errorf("%s %v, want %v", what, got, want)
		}
	}
	check("J/token mean", float64(r.EnergyPerUnitJoules.Mean), 0.0175)
	check("J/token stddev", val(r.EnergyPerUnitJoules.Stddev), 0.005/math.Sqrt2)
	check("tokens/J mean", float64(r.UnitsPerJoule.Mean), (50+200.0/3)/2)
	if r.RunsWithoutUnits != 1 || !strings.Contains(strings.Join(r.Warnings, "\n"), "1 run of 3 printed no count of tokens") {
		t.Errorf("runs without units %d, warnings %q", r.RunsWithoutUnits, r.Warnings)
	}
}

func TestNoUnitsNoPerUnitStatistics(t *testing.T) {
	rep := NewReport(100 * time.Millisecond)
	rep.Results = []Result{{Command: "x", Runs: []Run{runOf(2, 1)}}}
	rep.Finish(-1)
	if r := rep.Results[0]; r.EnergyPerUnitJoules != nil || r.UnitsPerJoule != nil || len(r.Warnings) != 0 {
		t.Errorf("without units: %+v", r)
	}
}
