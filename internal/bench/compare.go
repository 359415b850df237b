package bench

import (
	"fmt"
	"math"
	"time"

	"github.com/exopower/exopower/internal/wire"
)

// NewReport starts a report; Finish completes it.
func NewReport(interval time.Duration) *Report {
	return &Report{SchemaVersion: wire.SchemaVersion, Type: "bench", Complete: true,
		IntervalSeconds: wire.Num(interval.Seconds()), Scope: wire.Scope,
		Results: []Result{}, Warnings: []string{}}
}

// Finish computes every result's statistics and the comparison with the
// reference: the command at index ref, or with ref < 0 the one with the
// least mean energy.
func (rep *Report) Finish(ref int) {
	interval := time.Duration(float64(rep.IntervalSeconds) * float64(time.Second))
	for i := range rep.Results {
		rep.Results[i].finish(rep.Baseline, interval, rep.Unit)
	}
	if msg, ok := rep.Baseline.Drifted(); ok {
		rep.Warnings = append(rep.Warnings, msg)
	}
	if ref < 0 {
		ref = rep.leastEnergy()
	}
	if ref < 0 || ref >= len(rep.Results) || rep.Results[ref].EnergyJoules == nil || len(rep.Results) < 2 {
		return
	}
	rep.Reference = &ref
	a := rep.Results[ref].EnergyJoules
	for i := range rep.Results {
		b := rep.Results[i].EnergyJoules
		if b == nil {
			continue
		}
		r, sr := Ratio(float64(a.Mean), val(a.Stddev), float64(b.Mean), val(b.Stddev))
		rep.Results[i].RelativeEnergy, rep.Results[i].RelativeEnergyStddev = num(r), num(sr)
	}
}

// leastEnergy is the index of the result with the least mean energy, or
// -1 when none has a run.
func (rep *Report) leastEnergy() int {
	best, least := -1, math.Inf(1)
	for i, r := range rep.Results {
		if r.EnergyJoules != nil && float64(r.EnergyJoules.Mean) < least {
			best, least = i, float64(r.EnergyJoules.Mean)
		}
	}
	return best
}

// Comparison says how each command's energy compares with the
// reference's, a line each: "B used 2.31 ± 0.08 × the energy of A".
func (rep *Report) Comparison() []string {
	if rep.Reference == nil {
		return nil
	}
	ref := rep.Results[*rep.Reference]
	var lines []string
	for i, r := range rep.Results {
		if i == *rep.Reference || r.RelativeEnergy == nil {
			continue
		}
		lines = append(lines, fmt.Sprintf("%s used %s the energy of %s", r.Command, ratioText(r), ref.Command))
	}
	return lines
}

func ratioText(r Result) string {
	if r.RelativeEnergyStddev == nil {
		return fmt.Sprintf("%.2f ×", float64(*r.RelativeEnergy))
	}
	return fmt.Sprintf("%.2f ± %.2f ×", float64(*r.RelativeEnergy), float64(*r.RelativeEnergyStddev))
}
