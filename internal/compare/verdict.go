package compare

import (
	"fmt"
	"math"

	"github.com/exopower/exopower/internal/wire"
)

// outcome is a figure's test: the two samples, Welch's test and the
// ratio's interval, or why there is none.
type outcome struct {
	old, new Sample
	test     Test
	ci       Interval
	// tested is false where a side has fewer than two values; why says
	// so.
	tested bool
	why    string
}

func (o Options) test(a, b Sample, oldName, newName string) outcome {
	out := outcome{old: a, new: b, test: Test{T: math.NaN(), DF: math.NaN(), P: math.NaN()}, ci: Interval{Low: math.NaN(), High: math.NaN()}}
	switch {
	case a.N < 2 || math.IsNaN(a.SD):
		out.why = fmt.Sprintf("%s has %s: no spread to test against; bench with --runs 2 or more", oldName, values(a.N))
	case b.N < 2 || math.IsNaN(b.SD):
		out.why = fmt.Sprintf("%s has %s: no spread to test against; bench with --runs 2 or more", newName, values(b.N))
	default:
		out.tested = true
		out.test = Welch(a, b)
		out.ci = Fieller(a, b, out.test.DF, o.Alpha)
		if out.test.P == 0 || out.test.P == 1 {
			// Neither side has any spread: the means are the ratio's
			// bounds, and the test is certain.
			if r := b.Mean / a.Mean; a.Mean > 0 {
				out.ci = Interval{Low: r, High: r, Bounded: true}
			}
		}
	}
	return out
}

// clear says whether the old mean is told from zero, above it: a ratio
// to it means something.
func (out outcome) clear() bool {
	return out.old.Mean > 0 && (out.ci.Bounded || !out.tested)
}

// row compares the figure of and nf, of the old export and the new: the
// net figures where both have them and the old one is told from idle,
// else the gross ones.
func (o Options) row(of, nf Figure, oldName, newName string) Row {
	var notes []string
	if of.Net != nil && nf.Net != nil {
		out := o.test(*of.Net, *nf.Net, oldName, newName)
		if out.clear() {
			return o.verdict(out, "net-"+of.Slug, "net "+of.Label, of.Unit, notes)
		}
		notes = append(notes, fmt.Sprintf("the net %s in %s (%s) cannot be told from the idle Mac's: the gross %s is compared",
			of.Label, oldName, meanText(*of.Net, of.Unit), of.Label))
	}
	if of.Gross == nil || nf.Gross == nil {
		row := Row{Measure: of.Slug, Unit: of.Unit, Verdict: Untested, label: of.Label, Old: stats(of.Gross), New: stats(nf.Gross)}
		missing := oldName
		if of.Gross != nil {
			missing = newName
		}
		row.Notes = append(notes, fmt.Sprintf("%s has no %s: no request or run gave one", missing, of.Label))
		return row
	}
	return o.verdict(o.test(*of.Gross, *nf.Gross, oldName, newName), of.Slug, of.Label, of.Unit, notes)
}

// verdict is the row of a figure's outcome: regressed or improved where
// the change is significant at alpha and beyond the threshold either
// way, unchanged otherwise, untested where no test or ratio could be
// made.
func (o Options) verdict(out outcome, slug, label, unit string, notes []string) Row {
	row := Row{Measure: slug, Unit: unit, label: label, Old: stats(&out.old), New: stats(&out.new), Notes: notes}
	if out.old.Mean > 0 {
		r := out.new.Mean / out.old.Mean
		row.Ratio, row.Change = num(r), num(r-1)
	}
	if out.ci.Bounded {
		row.RatioLow, row.RatioHigh = num(out.ci.Low), num(out.ci.High)
	}
	if out.tested {
		row.T, row.DegreesOfFreedom, row.PValue = num(out.test.T), num(out.test.DF), num(out.test.P)
	}
	switch {
	case !out.tested:
		row.Verdict, row.Notes = Untested, append(row.Notes, out.why)
	case row.Ratio == nil:
		row.Verdict = Untested
		row.Notes = append(row.Notes, fmt.Sprintf("the old %s (%s) is not above zero: there is no ratio to it", label, meanText(out.old, unit)))
	case out.test.P < o.Alpha && float64(*row.Change) > o.Threshold:
		row.Verdict = Regressed
	case out.test.P < o.Alpha && float64(*row.Change) < -o.Threshold:
		row.Verdict = Improved
	default:
		row.Verdict = Unchanged
	}
	if row.Notes == nil {
		row.Notes = []string{}
	}
	return row
}

// stats is a side's values for the report; nil for none.
func stats(s *Sample) *Stats {
	if s == nil {
		return nil
	}
	st := &Stats{N: s.N, Mean: wire.Num(s.Mean), Stddev: num(s.SD)}
	if s.Shared > 0 {
		st.BaselineUncertainty = num(s.Shared)
	}
	return st
}

func values(n int) string {
	if n == 1 {
		return "one value"
	}
	return fmt.Sprintf("%d values", n)
}
