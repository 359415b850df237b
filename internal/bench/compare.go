package bench

import (
	"cmp"
	"fmt"
	"math"
	"slices"
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
// least mean energy. The reference's own ratio is 1, with no error: it
// is not measured against itself. A command alone is its own reference,
// as hyperfine's table gives a lone command's Relative as 1.00.
func (rep *Report) Finish(ref int) {
	interval := time.Duration(float64(rep.IntervalSeconds) * float64(time.Second))
	if w, _, ok := idleEstimate(rep.cal, rep.Baseline); ok {
		rep.Baseline.WallEstimatedPowerWatts = num(w)
	}
	for i := range rep.Results {
		rep.Results[i].finish(rep.Baseline, interval, rep.Unit)
	}
	if msg, ok := rep.Baseline.Drifted(); ok {
		rep.Warnings = append(rep.Warnings, msg)
	}
	if ref < 0 {
		ref = rep.leastEnergy()
	}
	if ref < 0 || ref >= len(rep.Results) || rep.Results[ref].EnergyJoules == nil {
		return
	}
	rep.Reference = &ref
	a := rep.Results[ref].EnergyJoules
	for i := range rep.Results {
		b := rep.Results[i].EnergyJoules
		switch {
		case i == ref:
			rep.Results[i].RelativeEnergy = num(1)
		case b != nil:
			// hyperfine's relative speed: an error only where both
			// commands have a spread.
			r, sr := Ratio(float64(a.Mean), val(a.Stddev), float64(b.Mean), val(b.Stddev))
			rep.Results[i].RelativeEnergy = num(r)
			if a.Stddev != nil && b.Stddev != nil {
				rep.Results[i].RelativeEnergyStddev = num(sr)
			}
		}
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

// Relation is how a command's mean energy compares with the
// reference's, as hyperfine words a speed: Ratio is the larger mean over
// the smaller, never below 1, Stddev its propagated error (nil where
// either lacks a spread), and More says whether the command used more
// energy than the reference (both false: as much).
type Relation struct {
	Ratio      float64
	Stddev     *float64
	More, Less bool
}

// Relate compares r's mean energy with ref's; ok is false when either
// has no run, or a mean of 0 makes the ratio infinite.
func Relate(ref, r Result) (rel Relation, ok bool) {
	a, b := ref.EnergyJoules, r.EnergyJoules
	if a == nil || b == nil || !(a.Mean > 0) || !(b.Mean > 0) {
		return Relation{}, false
	}
	ma, mb := float64(a.Mean), float64(b.Mean)
	rel.Ratio = 1
	switch {
	case mb > ma:
		rel.Ratio, rel.More = mb/ma, true
	case mb < ma:
		rel.Ratio, rel.Less = ma/mb, true
	}
	if a.Stddev != nil && b.Stddev != nil {
		sd := rel.Ratio * math.Hypot(float64(*a.Stddev)/ma, float64(*b.Stddev)/mb)
		rel.Stddev = &sd
	}
	return rel, true
}

// Text is the ratio as the summary writes it: "2.31 ± 0.08", the ratio
// alone without an error.
func (rel Relation) Text() string {
	if rel.Stddev == nil {
		return fmt.Sprintf("%.2f", rel.Ratio)
	}
	return fmt.Sprintf("%.2f ± %.2f", rel.Ratio, *rel.Stddev)
}

// Than is how the reference compares with another command, for the
// summary's line under "REF ran": "2.31 ± 0.08 times less energy than".
// (The reference used less when the other used more.)
func (rel Relation) Than() string {
	switch {
	case rel.More:
		return rel.Text() + " times less energy than"
	case rel.Less:
		return rel.Text() + " times more energy than"
	}
	return "as much energy (" + rel.Text() + ") as"
}

// Comparison says how the reference's energy compares with each other
// command's, a line each, in the summary's order: "A ran 2.31 ± 0.08
// times less energy than B".
func (rep *Report) Comparison() []string {
	if rep.Reference == nil {
		return nil
	}
	ref := rep.Results[*rep.Reference]
	var lines []string
	for _, i := range rep.SummaryOrder() {
		if i == *rep.Reference {
			continue
		}
		if rel, ok := Relate(ref, rep.Results[i]); ok {
			lines = append(lines, fmt.Sprintf("%s ran %s %s", ref.Label(), rel.Than(), rep.Results[i].Label()))
		}
	}
	return lines
}

// SummaryOrder is the order of the commands, by their index, in the
// summary: by mean energy, unless Sort asks for the commands' order.
// Commands without a run come last.
func (rep *Report) SummaryOrder() []int {
	if rep.Sort == SortCommand {
		return rep.commandOrder()
	}
	return rep.meanOrder()
}

// tableOrder is the order of the commands in the tables: the commands'
// own, unless Sort asks for their mean energy's.
func (rep *Report) tableOrder() []int {
	if rep.Sort == SortMean || rep.Sort == "mean-time" {
		return rep.meanOrder()
	}
	return rep.commandOrder()
}

func (rep *Report) commandOrder() []int {
	order := make([]int, len(rep.Results))
	for i := range order {
		order[i] = i
	}
	return order
}

func (rep *Report) meanOrder() []int {
	order := rep.commandOrder()
	mean := func(i int) float64 {
		if e := rep.Results[i].EnergyJoules; e != nil {
			return float64(e.Mean)
		}
		return math.Inf(1)
	}
	slices.SortStableFunc(order, func(i, j int) int { return cmp.Compare(mean(i), mean(j)) })
	return order
}
