package bench

import (
	"encoding/csv"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/exopower/exopower/internal/wire"
)

// WriteCSV writes one row per command, as hyperfine's --export-csv does,
// with energies in joules, power in watts and durations in seconds, and
// a column per -L parameter. An unknown value (a stddev of one run, a
// net energy without baseline, the system's energy where the source
// does not read it) is an empty field. The system's columns come after
// the units', so that the columns before keep their places.
func WriteCSV(w io.Writer, rep *Report) error {
	params := paramNames(rep)
	head := []string{"command", "energy_mean", "energy_stddev", "energy_median", "energy_min", "energy_max",
		"net_energy_mean", "net_energy_stddev", "net_energy_uncertainty", "power_mean", "power_stddev",
		"duration_mean", "duration_stddev", "relative_energy", "relative_energy_stddev", "runs",
		"energy_per_unit_mean", "energy_per_unit_stddev", "units_per_joule_mean", "units_per_joule_stddev", "runs_without_units",
		"system_energy_mean", "system_energy_stddev", "net_system_energy_mean", "net_system_energy_stddev"}
	for _, p := range params {
		head = append(head, "parameter_"+p)
	}
	cw := csv.NewWriter(w)
	cw.Write(head)
	for _, r := range rep.Results {
		row := []string{r.Command}
		row = append(row, spreadFields(r.EnergyJoules, true)...)
		row = append(row, spreadFields(r.NetEnergyJoules, false)...)
		row = append(row, field(r.NetEnergyUncertaintyJoules))
		row = append(row, spreadFields(r.AvgPowerWatts, false)...)
		row = append(row, spreadFields(r.DurationSeconds, false)...)
		row = append(row, field(r.RelativeEnergy), field(r.RelativeEnergyStddev), strconv.Itoa(len(r.Runs)))
		row = append(row, spreadFields(r.EnergyPerUnitJoules, false)...)
		row = append(row, spreadFields(r.UnitsPerJoule, false)...)
		row = append(row, unitsMissing(rep, r))
		row = append(row, spreadFields(r.SystemEnergyJoules, false)...)
		row = append(row, spreadFields(r.NetSystemEnergyJoules, false)...)
		for _, p := range params {
			row = append(row, r.Parameters[p])
		}
		cw.Write(row)
	}
	cw.Flush()
	return cw.Error()
}

// unitsMissing is the count of runs without units, empty without units.
func unitsMissing(rep *Report, r Result) string {
	if rep.Unit == nil {
		return ""
	}
	return strconv.Itoa(r.RunsWithoutUnits)
}

// spreadFields are mean and stddev, and with all median, min and max.
func spreadFields(s *Spread, all bool) []string {
	n := 2
	if all {
		n = 5
	}
	if s == nil {
		return make([]string, n)
	}
	f := []string{field(&s.Mean), field(s.Stddev), field(&s.Median), field(&s.Min), field(&s.Max)}
	return f[:n]
}

func field(n *wire.Num) string {
	if n == nil {
		return ""
	}
	b, _ := n.MarshalJSON()
	return string(b)
}

func paramNames(rep *Report) []string {
	names := map[string]bool{}
	for _, r := range rep.Results {
		for k := range r.Parameters {
			names[k] = true
		}
	}
	return slices.Sorted(maps.Keys(names))
}

// WriteMarkdown writes the table people paste into a pull request: each
// command's energy, net energy, power and duration as mean ± σ, and its
// energy relative to the reference; the whole system's energy where the
// source reads it.
func WriteMarkdown(w io.Writer, rep *Report) error {
	var b strings.Builder
	system := slices.ContainsFunc(rep.Results, func(r Result) bool { return r.SystemEnergyJoules != nil })
	b.WriteString("| Command | Energy [J] | Min [J] | Max [J] | Net energy [J] | Power [W] | Duration [s] | Relative |")
	if rep.Unit != nil {
		fmt.Fprintf(&b, " Energy per %s [J] |", *rep.Unit)
	}
	if system {
		b.WriteString(" System energy [J] |")
	}
	b.WriteString("\n|:---|---:|---:|---:|---:|---:|---:|---:|")
	if rep.Unit != nil {
		b.WriteString("---:|")
	}
	if system {
		b.WriteString("---:|")
	}
	b.WriteString("\n")
	for _, r := range rep.Results {
		rel := ""
		if r.RelativeEnergy != nil {
			rel = strings.TrimSuffix(ratioText(r), " ×")
		}
		minE, maxE := "", ""
		if r.EnergyJoules != nil {
			minE, maxE = fmt.Sprintf("%.3f", float64(r.EnergyJoules.Min)), fmt.Sprintf("%.3f", float64(r.EnergyJoules.Max))
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s | %s | %s |", strings.ReplaceAll(r.Command, "|", `\|`),
			meanSD(r.EnergyJoules, 3), minE, maxE, meanSD(r.NetEnergyJoules, 3), meanSD(r.AvgPowerWatts, 3),
			meanSD(r.DurationSeconds, 3), rel)
		if rep.Unit != nil {
			fmt.Fprintf(&b, " %s |", meanSD(r.EnergyPerUnitJoules, 6))
		}
		if system {
			fmt.Fprintf(&b, " %s |", meanSD(r.SystemEnergyJoules, 3))
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// meanSD is "mean ± σ" with prec decimals, the mean alone for one run,
// and nothing without runs.
func meanSD(s *Spread, prec int) string {
	if s == nil {
		return ""
	}
	if s.Stddev == nil {
		return strconv.FormatFloat(float64(s.Mean), 'f', prec, 64)
	}
	return fmt.Sprintf("%.*f ± %.*f", prec, float64(s.Mean), prec, float64(*s.Stddev))
}
