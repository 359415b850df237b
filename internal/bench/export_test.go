package bench

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// timedRun is a run of joules whose command took wall seconds, 1 ms of
// them in user mode and 2 ms in the kernel.
func timedRun(joules, wall float64) Run {
	r := runOf(joules, wall)
	r.UserSeconds, r.SystemSeconds = 0.001, 0.002
	return r
}

// twoCommands is a finished report of a (20 ms ± 2 ms, 2 J ± 1 J) and b
// (27 ms ± 2 ms, 5 J ± 1 J): a is the fastest and the least energy.
func twoCommands() *Report {
	rep := NewReport(100 * time.Millisecond)
	rep.Results = []Result{
		{Command: "a", Runs: []Run{timedRun(1, 0.018), timedRun(2, 0.020), timedRun(3, 0.022)}},
		{Command: "b", Runs: []Run{timedRun(4, 0.025), timedRun(5, 0.027), timedRun(6, 0.029)}},
	}
	rep.Finish(-1)
	return rep
}

func written(t *testing.T, write func(io.Writer, *Report) error, rep *Report) string {
	t.Helper()
	var buf bytes.Buffer
	if err := write(&buf, rep); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// Each result holds hyperfine's keys with hyperfine's meaning: the
// wall-clock times in seconds, their statistics, and the mean CPU times,
// so that the tools written for hyperfine's exports read exopower's.
func TestTheJSONHoldsHyperfinesKeysOfTheWallClockTimes(t *testing.T) {
	b, err := json.Marshal(twoCommands())
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Results []map[string]any `json:"results"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	r := doc.Results[0]
	for key, want := range map[string]float64{"mean": 0.020, "stddev": 0.002, "median": 0.020, "min": 0.018, "max": 0.022, "user": 0.001, "system": 0.002} {
		got, ok := r[key].(float64)
		if !ok || math.Abs(got-want) > 1e-9 {
			t.Errorf("%s: %v, want %v", key, r[key], want)
		}
	}
	if times, _ := r["times"].([]any); !slices.Equal(times, []any{0.018, 0.020, 0.022}) {
		t.Errorf("times %v, want each run's wall-clock time in order", r["times"])
	}
	for _, key := range []string{"command", "exit_codes", "parameters"} {
		if _, ok := r[key]; !ok {
			t.Errorf("no %q in %v", key, r)
		}
	}
}

// One run has no spread: its stddev is null, as hyperfine's, and so is
// the error of a ratio that takes it.
func TestOneRunHasNoSpreadAndNoErrorOfItsRatio(t *testing.T) {
	rep := NewReport(100 * time.Millisecond)
	rep.Results = []Result{{Command: "a", Runs: []Run{timedRun(2, 1)}}, {Command: "b", Runs: []Run{timedRun(3, 1), timedRun(5, 1)}}}
	rep.Finish(-1)
	a, b := rep.Results[0], rep.Results[1]
	if a.Stddev != nil || a.EnergyJoules.Stddev != nil {
		t.Errorf("one run's stddev %v, its energy's %v: want null", a.Stddev, a.EnergyJoules.Stddev)
	}
	if b.RelativeEnergyStddev != nil {
		t.Errorf("the ratio over a single run has an error %v: nothing is known of the run's spread", *b.RelativeEnergyStddev)
	}
	if md := written(t, WriteMarkdown, rep); strings.Contains(md, "± 0.00 |") {
		t.Errorf("a ± where nothing is known:\n%s", md)
	}
}

// The reference is not measured against itself: its ratio is 1, with no
// error, in the JSON, the CSV and the tables.
func TestTheReferenceHasNoErrorAgainstItself(t *testing.T) {
	rep := twoCommands()
	a := rep.Results[0]
	if a.RelativeEnergy == nil || *a.RelativeEnergy != 1 || a.RelativeEnergyStddev != nil {
		t.Errorf("the reference's ratio %v ± %v, want 1 and null", a.RelativeEnergy, a.RelativeEnergyStddev)
	}
	rows := csvRows(t, rep)
	col := slices.Index(rows[0], "relative_energy_stddev")
	if rows[1][col] != "" || rows[2][col] == "" {
		t.Errorf("relative_energy_stddev %q and %q, want the reference's empty", rows[1][col], rows[2][col])
	}
	if md := written(t, WriteMarkdown, rep); !strings.Contains(md, "| 2.000 ± 1.000 | 1.00 |\n") {
		t.Errorf("the reference's row:\n%s", md)
	}
}

// The CSV's first columns are hyperfine's, named and ordered as its
// --export-csv writes them, the parameters' included; exopower's follow.
func TestTheCSVBeginsWithHyperfinesColumns(t *testing.T) {
	rep := twoCommands()
	rep.Results[0].Parameters, rep.Results[1].Parameters = map[string]string{"n": "1"}, map[string]string{"n": "2"}
	rows := csvRows(t, rep)
	want := []string{"command", "mean", "stddev", "median", "user", "system", "min", "max", "parameter_n", "energy_mean"}
	if !slices.Equal(rows[0][:len(want)], want) {
		t.Errorf("header %v, want it to begin %v", rows[0], want)
	}
	if got := rows[1][:9]; !slices.Equal(got, []string{"a", "0.02", "0.002", "0.02", "0.001", "0.002", "0.018", "0.022", "1"}) {
		t.Errorf("a's row begins %v", got)
	}
}

// The tables are hyperfine's five columns first, the times in the unit
// of the first command's mean, the relative time against the fastest;
// then the energy and its ratio to the reference.
func TestTheTablesBeginWithHyperfinesFiveColumns(t *testing.T) {
	rep := twoCommands()
	md := "| Command | Mean [ms] | Min [ms] | Max [ms] | Relative | Energy [J] | Relative energy |\n" +
		"|:---|---:|---:|---:|---:|---:|---:|\n" +
		"| `a` | 20.0 ± 2.0 | 18.0 | 22.0 | 1.00 | 2.000 ± 1.000 | 1.00 |\n" +
		"| `b` | 27.0 ± 2.0 | 25.0 | 29.0 | 1.35 ± 0.17 | 5.000 ± 1.000 | 2.50 ± 1.35 |\n"
	if got := written(t, WriteMarkdown, rep); got != md {
		t.Errorf("markdown:\n%s\nwant\n%s", got, md)
	}
	// As hyperfine 1.15 writes its AsciiDoc and Org tables.
	adoc := "[cols=\"<,>,>,>,>,>,>\"]\n|===\n| Command \n| Mean [ms] \n| Min [ms] \n| Max [ms] \n| Relative \n| Energy [J] \n| Relative energy \n" +
		"\n| `a` \n| 20.0 ± 2.0 \n| 18.0 \n| 22.0 \n| 1.00 \n| 2.000 ± 1.000 \n| 1.00 \n" +
		"\n| `b` \n| 27.0 ± 2.0 \n| 25.0 \n| 29.0 \n| 1.35 ± 0.17 \n| 5.000 ± 1.000 \n| 2.50 ± 1.35 \n|===\n"
	if got := written(t, WriteAsciiDoc, rep); got != adoc {
		t.Errorf("asciidoc:\n%s\nwant\n%s", got, adoc)
	}
	org := "| Command  |  Mean [ms] |  Min [ms] |  Max [ms] |  Relative |  Energy [J] |  Relative energy |\n" +
		"|--+--+--+--+--+--+--|\n" +
		"| =a=  |  20.0 ± 2.0 |  18.0 |  22.0 |  1.00 |  2.000 ± 1.000 |  1.00 |\n" +
		"| =b=  |  27.0 ± 2.0 |  25.0 |  29.0 |  1.35 ± 0.17 |  5.000 ± 1.000 |  2.50 ± 1.35 |\n"
	if got := written(t, WriteOrgMode, rep); got != org {
		t.Errorf("org:\n%s\nwant\n%s", got, org)
	}
}

// The unit of the tables' times follows hyperfine's: chosen by the first
// command's mean, or as TimeUnit says; the order of their rows is the
// commands' unless Sort asks for the mean energy's.
func TestTheTablesTimeUnitAndOrder(t *testing.T) {
	for _, tc := range []struct {
		name       string
		wall       float64
		unit, sort string
		want       []string
	}{
		{"seconds", 1.5, "", "", []string{"| Mean [s] |", "| `a` | 1.500 ± 0.000 | 1.500 | 1.500 |"}},
		{"microseconds", 0.0005, "", "", []string{"| Mean [µs] |", "| `a` | 500.0 ± 0.0 | 500.0 | 500.0 |"}},
		{"as asked", 1.5, TimeMillisecond, "", []string{"| Mean [ms] |", "| `a` | 1500.0 ± 0.0 |"}},
		{"by mean energy", 1.5, "", SortMean, []string{"|\n| `b` |", "|\n| `a` |"}},
	} {
		rep := NewReport(100 * time.Millisecond)
		rep.Results = []Result{{Command: "a", Runs: []Run{timedRun(3, tc.wall), timedRun(3, tc.wall)}},
			{Command: "b", Runs: []Run{timedRun(1, tc.wall), timedRun(1, tc.wall)}}}
		rep.TimeUnit, rep.Sort = tc.unit, tc.sort
		rep.Finish(-1)
		md := written(t, WriteMarkdown, rep)
		for _, w := range tc.want {
			if !strings.Contains(md, w) {
				t.Errorf("%s: no %q in\n%s", tc.name, w, md)
			}
		}
		if tc.sort != "" && strings.Index(md, "`b`") > strings.Index(md, "`a`") {
			t.Errorf("%s: a before b:\n%s", tc.name, md)
		}
	}
}

// The comparison keeps its ratio at 1 or more, as hyperfine's, and says
// which way: a reference that used more than another says so rather than
// "0.62 ×".
func TestTheComparisonsRatioIsAtLeastOneAndSaysWhichWay(t *testing.T) {
	rep := NewReport(100 * time.Millisecond)
	rep.Results = []Result{
		{Command: "ref", Runs: []Run{runOf(3.9, 1), runOf(4.1, 1)}},
		{Command: "less", Runs: []Run{runOf(1.9, 1), runOf(2.1, 1)}},
		{Command: "more", Runs: []Run{runOf(7.9, 1), runOf(8.1, 1)}},
		{Command: "same", Runs: []Run{runOf(3.8, 1), runOf(4.2, 1)}},
	}
	rep.Finish(0)
	want := []string{
		"ref ran 2.00 ± 0.16 times more energy than less",
		"ref ran as much energy (1.00 ± 0.08) as same",
		"ref ran 2.00 ± 0.08 times less energy than more",
	}
	if got := rep.Comparison(); !slices.Equal(got, want) {
		t.Errorf("comparison\n%q\nwant, in order of mean energy,\n%q", got, want)
	}
	rep.Sort = SortCommand
	if got := rep.Comparison(); !slices.Equal(got, []string{want[0], want[2], want[1]}) {
		t.Errorf("in the commands' order: %q", got)
	}
}

// A command that never ran has no row values, and nothing to compare.
func TestACommandWithoutRunsHasEmptyCells(t *testing.T) {
	rep := twoCommands()
	rep.Results = append(rep.Results, Result{Command: "c", Runs: []Run{}})
	rep.Finish(-1)
	if c := rep.Results[2]; c.Mean != nil || c.User != nil || c.Times == nil || len(c.Times) != 0 {
		t.Errorf("c: mean %v, user %v, times %v: want null, null, []", c.Mean, c.User, c.Times)
	}
	if md := written(t, WriteMarkdown, rep); !strings.HasSuffix(md, "| `c` |  |  |  |  |  |  |\n") {
		t.Errorf("markdown:\n%s", md)
	}
}
