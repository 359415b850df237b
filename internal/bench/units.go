package bench

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/exopower/exopower/internal/output"
)

// UnitsFrom reads a run's count of units of work from its output: the
// first group of re's first match. ok is false when re matches nothing,
// or its group is no positive number: that run's units are missing.
func UnitsFrom(re *regexp.Regexp, out []byte) (units float64, ok bool) {
	m := re.FindSubmatch(out)
	if len(m) < 2 {
		return 0, false
	}
	// Counts are often printed with thousands separators.
	s := strings.ReplaceAll(strings.TrimSpace(string(m[1])), ",", "")
	u, err := strconv.ParseFloat(s, 64)
	if err != nil || !(u > 0) {
		return 0, false
	}
	return u, true
}

// perUnit fills in the energy per unit and the units per joule of the
// runs that have units, and warns of those that lack them.
func (r *Result) perUnit(unit string) {
	var perUnit, perJoule []float64
	missing := 0
	for _, run := range r.Runs {
		if run.Units == nil {
			missing++
			continue
		}
		e, u := float64(run.EnergyJoules.Total), float64(*run.Units)
		perUnit = append(perUnit, e/u)
		if e > 0 {
			perJoule = append(perJoule, u/e)
		}
	}
	r.EnergyPerUnitJoules, r.UnitsPerJoule = newSpread(perUnit), newSpread(perJoule)
	r.RunsWithoutUnits = missing
	if missing > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s of %d printed no count of %ss that --units-from reads: "+
			"the energy per %s is of the other runs", output.Count(missing, "run"), len(r.Runs), unit, unit))
	}
}
