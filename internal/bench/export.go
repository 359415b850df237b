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

// WriteCSV writes one row per command. Its first columns are hyperfine's
// --export-csv, by name and in order: command, then the wall-clock time's
// mean, stddev and median, the mean user and system CPU times, min and
// max, in seconds, and a column per -L parameter; then exopower's, with
// energies in joules, power in watts and durations in seconds. An
// unknown value (a stddev of one run, a net energy without baseline, the
// system's energy where the source does not read it, the reference's
// error against itself) is an empty field. The system's columns come
// after the units', so that the columns before keep their places.
func WriteCSV(w io.Writer, rep *Report) error {
	params := paramNames(rep)
	head := []string{"command", "mean", "stddev", "median", "user", "system", "min", "max"}
	for _, p := range params {
		head = append(head, "parameter_"+p)
	}
	head = append(head, "energy_mean", "energy_stddev", "energy_median", "energy_min", "energy_max",
		"net_energy_mean", "net_energy_stddev", "net_energy_uncertainty", "power_mean", "power_stddev",
		"duration_mean", "duration_stddev", "relative_energy", "relative_energy_stddev", "runs",
		"energy_per_unit_mean", "energy_per_unit_stddev", "units_per_joule_mean", "units_per_joule_stddev", "runs_without_units",
		"system_energy_mean", "system_energy_stddev", "net_system_energy_mean", "net_system_energy_stddev",
		"wall_energy_mean", "wall_energy_stddev", "wall_energy_uncertainty", "net_wall_energy_mean", "net_wall_energy_stddev",
		"net_wall_energy_uncertainty", "wall_energy_per_unit_mean", "wall_energy_per_unit_stddev", "wall_method",
		"wall_estimated_energy_mean", "wall_estimated_energy_stddev", "wall_estimated_energy_uncertainty", "net_wall_estimated_energy_mean",
		"net_wall_estimated_energy_stddev", "wall_estimated_energy_per_unit_mean", "wall_estimated_energy_per_unit_stddev", "wall_estimated_from",
		"cost_currency", "cost_price_per_kwh", "cost_of", "cost_mean", "cost_per_unit_mean",
		"co2e_intensity_g_per_kwh", "co2e_of", "co2e_grams_mean", "co2e_grams_per_unit_mean")
	cw := csv.NewWriter(w)
	cw.Write(head)
	for _, r := range rep.Results {
		row := []string{r.Command, field(r.Mean), field(r.Stddev), field(r.Median), field(r.User), field(r.System), field(r.Min), field(r.Max)}
		for _, p := range params {
			row = append(row, r.Parameters[p])
		}
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
		row = append(row, wallFields(r.Wall)...)
		row = append(row, estimatedFields(r.WallEstimated)...)
		row = append(row, costFields(r)...)
		cw.Write(row)
	}
	cw.Flush()
	return cw.Error()
}

// costColumnCount is how many columns the cost and CO2e have in the
// CSV: the last.
const costColumnCount = 9

// costFields are a command's columns of its cost and CO2e, empty where
// not priced.
func costFields(r Result) []string {
	f := make([]string, costColumnCount)
	if c := r.Cost; c != nil {
		f[0], f[1], f[2], f[3], f[4] = c.Currency, field(&c.PricePerKWh), c.Of, field(&c.Amount), field(c.AmountPerUnit)
	}
	if c := r.CO2e; c != nil {
		f[5], f[6], f[7], f[8] = field(&c.IntensityGPerKWh), c.Of, field(&c.Grams), field(c.GramsPerUnit)
	}
	return f
}

// wallColumnCount is how many columns the wall has in the CSV, measured
// and estimated: before the cost's.
const wallColumnCount = 9 + estimatedColumnCount

// estimatedColumnCount is how many of them are the estimate's, after
// the plug's.
const estimatedColumnCount = 8

// estimatedFields are a command's columns at the wall as estimated from
// this Mac's calibration, empty without one.
func estimatedFields(w *ResultWallEstimated) []string {
	if w == nil {
		return make([]string, estimatedColumnCount)
	}
	f := spreadFields(w.EnergyJoules, false)
	f = append(f, field(&w.UncertaintyJoules))
	f = append(f, spreadFields(w.NetEnergyJoules, false)...)
	f = append(f, spreadFields(w.EnergyPerUnitJoules, false)...)
	return append(f, w.From)
}

// wallFields are a command's columns at the wall, empty without --wall.
func wallFields(w *ResultWall) []string {
	if w == nil {
		return make([]string, wallColumnCount-estimatedColumnCount)
	}
	f := spreadFields(w.EnergyJoules, false)
	f = append(f, field(&w.UncertaintyJoules))
	f = append(f, spreadFields(w.NetEnergyJoules, false)...)
	f = append(f, field(w.NetEnergyUncertaintyJoules))
	f = append(f, spreadFields(w.EnergyPerUnitJoules, false)...)
	return append(f, w.Method)
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

// WriteMarkdown writes the table people paste into a pull request, in
// hyperfine's form: its columns first (Command; the wall-clock time's
// Mean ± σ, Min and Max in the unit of the first command's mean, or
// TimeUnit's; Relative, the time over the fastest's), then each
// command's energy (mean ± σ), its net energy with a baseline, and its
// energy relative to the reference; the energy per unit with units and
// the whole system's energy where the source reads it.
func WriteMarkdown(w io.Writer, rep *Report) error {
	return writeTable(w, rep, markdown{})
}

// WriteAsciiDoc writes WriteMarkdown's table as AsciiDoc, as hyperfine's
// --export-asciidoc does.
func WriteAsciiDoc(w io.Writer, rep *Report) error {
	return writeTable(w, rep, asciiDoc{})
}

// WriteOrgMode writes WriteMarkdown's table as an Emacs Org mode table,
// as hyperfine's --export-orgmode does.
func WriteOrgMode(w io.Writer, rep *Report) error {
	return writeTable(w, rep, orgMode{})
}

// markup is one of hyperfine's table formats (its src/export/markup.rs):
// each draws rows, a rule under the header, and the command.
type markup interface {
	header(cols int) string
	row(cells []string) string
	rule(cols int) string
	footer() string
	command(c string) string
}

// The formats of hyperfine's tables, cell for cell.
type (
	markdown struct{}
	asciiDoc struct{}
	orgMode  struct{}
)

func (markdown) header(int) string         { return "" }
func (markdown) row(cells []string) string { return "| " + strings.Join(cells, " | ") + " |\n" }
func (markdown) rule(cols int) string      { return "|:---|" + strings.Repeat("---:|", cols-1) + "\n" }
func (markdown) footer() string            { return "" }
func (markdown) command(c string) string   { return "`" + c + "`" }

func (asciiDoc) header(cols int) string {
	return `[cols="<` + strings.Repeat(",>", cols-1) + "\"]\n|==="
}
func (asciiDoc) row(cells []string) string { return "\n| " + strings.Join(cells, " \n| ") + " \n" }
func (asciiDoc) rule(int) string           { return "" }
func (asciiDoc) footer() string            { return "|===\n" }
func (asciiDoc) command(c string) string   { return "`" + c + "`" }

func (orgMode) header(int) string { return "" }
func (orgMode) row(cells []string) string {
	return "| " + cells[0] + "  |  " + strings.Join(cells[1:], " |  ") + " |\n"
}
func (orgMode) rule(cols int) string    { return "|" + strings.Repeat("--+", cols-1) + "--|\n" }
func (orgMode) footer() string          { return "" }
func (orgMode) command(c string) string { return "=" + c + "=" }

// writeTable writes the table in format m.
func writeTable(w io.Writer, rep *Report, m markup) error {
	unit := timeUnit(rep)
	net := rep.Baseline != nil && slices.ContainsFunc(rep.Results, func(r Result) bool { return r.NetEnergyJoules != nil })
	system := slices.ContainsFunc(rep.Results, func(r Result) bool { return r.SystemEnergyJoules != nil })
	head := []string{"Command", "Mean [" + unit.short + "]", "Min [" + unit.short + "]", "Max [" + unit.short + "]", "Relative"}
	// The wall leads where a plug read it, as in the text.
	atWall := wallColumns(rep)
	head = append(head, atWall.head()...)
	head = append(head, "Energy [J]")
	if net {
		head = append(head, "Net energy [J]")
	}
	head = append(head, "Relative energy")
	if rep.Unit != nil {
		head = append(head, fmt.Sprintf("Energy per %s [J]", *rep.Unit))
	}
	if system {
		head = append(head, "System energy [J]")
	}
	priced := costColumns(rep)
	head = append(head, priced.head(rep.Unit)...)
	var b strings.Builder
	b.WriteString(m.header(len(head)))
	b.WriteString(m.row(head))
	b.WriteString(m.rule(len(head)))
	fastest := rep.fastest()
	for _, i := range rep.tableOrder() {
		r := rep.Results[i]
		cells := []string{m.command(strings.ReplaceAll(r.Label(), "|", `\|`)), unit.meanSD(r.Mean, r.Stddev), unit.format(r.Min), unit.format(r.Max),
			relativeTime(rep, fastest, i)}
		cells = append(cells, atWall.cells(r)...)
		cells = append(cells, meanSD(r.EnergyJoules, 3))
		if net {
			cells = append(cells, meanSD(r.NetEnergyJoules, 3))
		}
		cells = append(cells, ratioCell(r.RelativeEnergy, r.RelativeEnergyStddev))
		if rep.Unit != nil {
			cells = append(cells, meanSD(r.EnergyPerUnitJoules, 6))
		}
		if system {
			cells = append(cells, meanSD(r.SystemEnergyJoules, 3))
		}
		cells = append(cells, priced.cells(r)...)
		b.WriteString(m.row(cells))
	}
	b.WriteString(m.footer())
	_, err := io.WriteString(w, b.String())
	return err
}

// durationUnit is how a table writes times: hyperfine's units and
// decimals.
type durationUnit struct {
	short  string
	factor float64
	prec   int
}

var (
	unitSecond      = durationUnit{"s", 1, 3}
	unitMillisecond = durationUnit{"ms", 1e3, 1}
	unitMicrosecond = durationUnit{"µs", 1e6, 1}
)

// timeUnit is the report's TimeUnit, or as hyperfine chooses it: by the
// first command's mean, µs below a millisecond, ms below a second.
func timeUnit(rep *Report) durationUnit {
	switch rep.TimeUnit {
	case TimeSecond:
		return unitSecond
	case TimeMillisecond:
		return unitMillisecond
	case TimeMicrosecond:
		return unitMicrosecond
	}
	if len(rep.Results) == 0 || rep.Results[0].Mean == nil {
		return unitSecond
	}
	return unitOf(float64(*rep.Results[0].Mean))
}

// unitOf is the unit hyperfine writes seconds s in.
func unitOf(s float64) durationUnit {
	switch {
	case s < 0.001:
		return unitMicrosecond
	case s < 1:
		return unitMillisecond
	}
	return unitSecond
}

func (u durationUnit) format(s *wire.Num) string {
	if s == nil {
		return ""
	}
	return strconv.FormatFloat(float64(*s)*u.factor, 'f', u.prec, 64)
}

// meanSD is "mean ± σ", the mean alone without σ.
func (u durationUnit) meanSD(mean, sd *wire.Num) string {
	if sd == nil || mean == nil {
		return u.format(mean)
	}
	return u.format(mean) + " ± " + u.format(sd)
}

// fastest is the index of the result with the least mean time, -1 when
// none ran.
func (rep *Report) fastest() int {
	best := -1
	for i, r := range rep.Results {
		if r.Mean != nil && (best < 0 || *r.Mean < *rep.Results[best].Mean) {
			best = i
		}
	}
	return best
}

// relativeTime is hyperfine's Relative column: the mean time over the
// fastest's, ± the error propagated where both have a spread, the
// fastest's own without one.
func relativeTime(rep *Report, fastest, i int) string {
	if fastest < 0 || rep.Results[i].Mean == nil || !(*rep.Results[fastest].Mean > 0) {
		return ""
	}
	if i == fastest {
		return "1.00"
	}
	f, r := rep.Results[fastest], rep.Results[i]
	ratio, sd := Ratio(float64(*f.Mean), val(f.Stddev), float64(*r.Mean), val(r.Stddev))
	if f.Stddev == nil || r.Stddev == nil {
		return fmt.Sprintf("%.2f", ratio)
	}
	return fmt.Sprintf("%.2f ± %.2f", ratio, sd)
}

// ratioCell is "r ± σ", r alone without σ, nothing without r.
func ratioCell(r, sd *wire.Num) string {
	switch {
	case r == nil:
		return ""
	case sd == nil:
		return fmt.Sprintf("%.2f", float64(*r))
	}
	return fmt.Sprintf("%.2f ± %.2f", float64(*r), float64(*sd))
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

// wallTable is which of the wall's columns a table has: the plug's,
// and the estimate's from this Mac's calibration.
type wallTable struct{ wall, net, unit, est, estNet, estUnit bool }

func wallColumns(rep *Report) wallTable {
	var t wallTable
	for _, r := range rep.Results {
		if w := r.Wall; w != nil {
			t.wall, t.net, t.unit = true, t.net || w.NetEnergyJoules != nil, t.unit || w.EnergyPerUnitJoules != nil
		}
		if w := r.WallEstimated; w != nil {
			t.est, t.estNet, t.estUnit = true, t.estNet || w.NetEnergyJoules != nil, t.estUnit || w.EnergyPerUnitJoules != nil
		}
	}
	return t
}

func (t wallTable) head() []string {
	var h []string
	if t.wall {
		h = append(h, "Wall energy [J]", "Wall ± [J]")
	}
	if t.net {
		h = append(h, "Net wall energy [J]")
	}
	if t.unit {
		h = append(h, "Wall energy per unit [J]")
	}
	if t.est {
		h = append(h, "Wall energy (estimated) [J]", "Wall (estimated) ± [J]")
	}
	if t.estNet {
		h = append(h, "Net wall energy (estimated) [J]")
	}
	if t.estUnit {
		h = append(h, "Wall energy (estimated) per unit [J]")
	}
	return h
}

// cells are r's cells at the wall: the mean ± σ over the runs, and the
// plug's uncertainty apart, which more runs do not shrink.
func (t wallTable) cells(r Result) []string {
	w := r.Wall
	if w == nil {
		w = &ResultWall{}
	}
	var c []string
	if t.wall {
		c = append(c, meanSD(w.EnergyJoules, 3), "")
		if r.Wall != nil {
			c[1] = fmt.Sprintf("%.3f", float64(w.UncertaintyJoules))
		}
	}
	if t.net {
		c = append(c, meanSD(w.NetEnergyJoules, 3))
	}
	if t.unit {
		c = append(c, meanSD(w.EnergyPerUnitJoules, 6))
	}
	return append(c, t.estimatedCells(r)...)
}

// estimatedCells are r's cells at the wall as estimated: the mean ± σ
// over the runs, and the fit's error apart, which more runs do not
// shrink.
func (t wallTable) estimatedCells(r Result) []string {
	w := r.WallEstimated
	if w == nil {
		w = &ResultWallEstimated{}
	}
	var c []string
	if t.est {
		c = append(c, meanSD(w.EnergyJoules, 3), "")
		if r.WallEstimated != nil {
			c[1] = fmt.Sprintf("%.3f", float64(w.UncertaintyJoules))
		}
	}
	if t.estNet {
		c = append(c, meanSD(w.NetEnergyJoules, 3))
	}
	if t.estUnit {
		c = append(c, meanSD(w.EnergyPerUnitJoules, 6))
	}
	return c
}
