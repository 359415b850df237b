package bench

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/output"
)

// Each command's result is handed over as soon as its runs are done,
// before the next command's runs and the closing baseline, with the
// statistics known by then: its block is written at once, as hyperfine
// writes each benchmark, not after the closing baseline.
func TestEachCommandIsHandedOverOnceItsRunsAreDone(t *testing.T) {
	m := &fakeMeter{}
	cfg := Config{Jobs: Jobs([]string{"echo a", "echo b"}, "", nil, Hooks{}), Runs: 2, Baseline: time.Second}
	cfg.Finished = func(i int, r Result) {
		m.calls = append(m.calls, fmt.Sprintf("finished %d %s %v J", i, r.Command, r.EnergyJoules.Mean))
		if len(r.Times) != 2 || !(r.Times[0] > 0) || r.Mean == nil || r.NetEnergyJoules != nil {
			t.Errorf("result %d: times %v, mean %v, net %v: want the wall-clock times and no net energy yet", i, r.Times, r.Mean, r.NetEnergyJoules)
		}
	}
	r, _ := runner(t, cfg, m)
	rep := r.Measure(context.Background())
	want := "idle 500ms,idle 500ms,begin,end,begin,end,finished 0 echo a 1.5 J,begin,end,begin,end,finished 1 echo b 3.5 J,idle 500ms,idle 500ms"
	if got := strings.Join(m.calls, ","); got != want {
		t.Errorf("the meter and the callback were called\n%s\nwant\n%s", got, want)
	}
	if rep.Results[0].EnergyJoules != nil {
		t.Errorf("the report's own result was finished: %+v", rep.Results[0].EnergyJoules)
	}
}

// Each run's wall-clock time is the command's own, and its CPU times its
// rusage's: a command that spins in user mode has user time.
func TestEachRunHasItsWallClockAndCPUTimes(t *testing.T) {
	r, _ := runner(t, Config{Jobs: Jobs([]string{"i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done"}, "", nil, Hooks{}), Runs: 1}, &fakeMeter{})
	run := r.Measure(context.Background()).Results[0].Runs[0]
	if !(run.WallSeconds > 0) || !(run.UserSeconds+run.SystemSeconds > 0) || run.UserSeconds+run.SystemSeconds > run.WallSeconds*1.5 {
		t.Errorf("wall %v s, user %v s, system %v s: want a wall-clock time, and CPU time within it", run.WallSeconds, run.UserSeconds, run.SystemSeconds)
	}
}

func plain() *output.Styles { return &output.Styles{Plain: true} }

// A block is hyperfine's, in joules: energy, range and runs, power and
// time beneath.
func TestABlockIsHyperfinesInJoules(t *testing.T) {
	var out, errs bytes.Buffer
	text := NewText(&out, &errs, plain(), plain())
	r := Result{Command: "a", Runs: []Run{timedRun(1, 0.018), timedRun(2, 0.020), timedRun(3, 0.022)}}
	text.Benchmark(0, r.Preview(time.Millisecond, nil))
	want := "Benchmark 1: a\n" +
		"  Energy (mean ± σ):    2.000 J ±  1.000 J\n" +
		"  Range (min … max):    1.000 J …  3.000 J    3 runs\n" +
		"  Power (mean ± σ):     97.31 W ±  40.47 W\n" +
		"  Time (mean ± σ):      20.0 ms ±   2.0 ms    [User: 1.0 ms, System: 2.0 ms]\n\n"
	if out.String() != want || errs.Len() != 0 {
		t.Errorf("block\n%s\nwant\n%s\nstderr %q", out.String(), want, errs.String())
	}
}

// One run has no spread: no ± and no range, where nothing is known.
func TestABlockOfOneRunHasNoSpread(t *testing.T) {
	var out bytes.Buffer
	r := Result{Command: "a", Runs: []Run{timedRun(2, 1.5)}}
	NewText(&out, &out, plain(), plain()).Benchmark(0, r.Preview(10*time.Millisecond, nil))
	if got := out.String(); strings.Contains(got, "±") || strings.Contains(got, "Range") || !strings.Contains(got, "  Energy (abs ≡):       2.000 J               1 run\n") {
		t.Errorf("one run:\n%s", got)
	}
}

// Warnings go to stderr, each once, naming its command; stdout has the
// data alone.
func TestWarningsGoToStderrOnce(t *testing.T) {
	rep := twoCommands() // runs shorter than two windows: a warning each
	rep.Complete = false
	var out, errs bytes.Buffer
	text := NewText(&out, &errs, plain(), plain())
	text.Benchmark(0, rep.Results[0])
	if err := text.Summary(rep); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "warning") {
		t.Errorf("a warning on stdout:\n%s", out.String())
	}
	want := "exopower: warning: a: 3 runs shorter than two sampling windows (200ms): a shorter interval (-i) measures them better\n" +
		"exopower: warning: b: 3 runs shorter than two sampling windows (200ms): a shorter interval (-i) measures them better\n" +
		"exopower: warning: the bench was cut short: these are the runs made by then\n"
	if errs.String() != want {
		t.Errorf("stderr\n%s\nwant\n%s", errs.String(), want)
	}
}

// The summary is hyperfine's, of energy: the reference first, then how
// it compares with each other command in order of mean energy, never
// below 1, worded more or less.
func TestTheSummaryIsHyperfinesOfEnergy(t *testing.T) {
	rep := NewReport(100 * time.Millisecond)
	rep.Results = []Result{
		{Command: "ref", Runs: []Run{runOf(3.9, 1), runOf(4.1, 1)}},
		{Command: "more", Runs: []Run{runOf(8, 1)}},
		{Command: "less", Runs: []Run{runOf(1.9, 1), runOf(2.1, 1)}},
	}
	rep.Finish(0)
	var out bytes.Buffer
	if err := WriteText(&out, rep, plain()); err != nil {
		t.Fatal(err)
	}
	want := "\nSummary\n  ref ran\n    2.00 ± 0.16 times more energy than less\n    2.00 times less energy than more\n"
	if !strings.HasSuffix(out.String(), want) {
		t.Errorf("text\n%s\nwant it to end\n%s", out.String(), want)
	}
}

// With a baseline, the end gives the idle power and each command's net
// energy with the baseline's uncertainty; the blocks the gross energy.
func TestTheNetEnergyComesAfterTheClosingBaseline(t *testing.T) {
	ws := spans(pieceOf(1.9), pieceOf(2.1), pieceOf(1.9), pieceOf(2.1))
	rep := NewReport(100 * time.Millisecond)
	rep.Baseline = NewBaseline(ws[:2], nil, ws[2:])
	rep.Results = []Result{{Command: "a", Runs: []Run{runOf(10, 2), runOf(12, 3)}}}
	rep.Finish(-1)
	var out bytes.Buffer
	if err := WriteText(&out, rep, plain()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\n  Energy (mean ± σ):    11.00 J ±  1.414 J\n", "\n  Time (mean ± σ):      2.500 s ±  0.707 s    [User: 0.000 s, System: 0.000 s]\n\nIdle", "\nIdle baseline: 2.000 W ± 0.058 W\n",
		"\nNet energy (less the idle power over each run):\n  a  6.000 J ± 0.000 J   (± 0.144 J from the baseline)\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in\n%s", want, out.String())
		}
	}
}

// A reference that used 0 J on average (runs shorter than the source's
// smallest count) has no ratio to it: no line of infinite ratio, and a
// warning that says why, as hyperfine says of times of zero.
func TestAReferenceOfNoEnergyHasNoRatio(t *testing.T) {
	rep := NewReport(100 * time.Millisecond)
	rep.Results = []Result{{Command: "true", Runs: []Run{runOf(0, 1), runOf(0, 1)}}, {Command: "b", Runs: []Run{runOf(1, 1), runOf(2, 1)}}}
	rep.Finish(-1)
	var out, errs bytes.Buffer
	if err := NewText(&out, &errs, plain(), plain()).Summary(rep); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "Summary") || strings.Contains(out.String(), "Inf") || rep.Results[1].RelativeEnergy != nil {
		t.Errorf("a ratio to nothing: relative %v\n%s", rep.Results[1].RelativeEnergy, out.String())
	}
	if !strings.Contains(errs.String(), "exopower: warning: true used 0 J on average, less than the source counts: there is no ratio to it") {
		t.Errorf("stderr %q", errs.String())
	}
}

// The time line is laid out as hyperfine's own ("  Time (mean ± σ):
// {:>8} ± {:>8}    [User: …]"): a value wider than 8 columns pushes what
// follows to the right rather than eating the gap before it, and σ takes
// 8 columns, not more; one run's line leaves σ's room empty.
func TestTheTimeLineIsLaidOutAsHyperfines(t *testing.T) {
	for _, c := range []struct {
		what string
		runs []Run
		unit string
		want string
	}{
		{"a wide mean", []Run{timedRun(1, 1.2344), timedRun(2, 1.2346)}, TimeMillisecond,
			"  Time (mean ± σ):     1234.5 ms ±   0.1 ms    [User: 1.0 ms, System: 2.0 ms]\n"},
		{"seconds", []Run{timedRun(1, 1.203), timedRun(2, 1.205)}, "",
			"  Time (mean ± σ):      1.204 s ±  0.001 s    [User: 0.001 s, System: 0.002 s]\n"},
		{"microseconds", []Run{timedRun(1, 0.0005), timedRun(2, 0.0007)}, "",
			"  Time (mean ± σ):     600.0 µs ± 141.4 µs    [User: 1000.0 µs, System: 2000.0 µs]\n"},
		{"one run", []Run{timedRun(1, 1.5)}, "",
			"  Time (abs ≡):         1.500 s               [User: 0.001 s, System: 0.002 s]\n"},
		{"one run's power: no spaces after it", []Run{timedRun(1, 1.5)}, "", "  Power (abs ≡):        0.667 W\n"},
	} {
		var out bytes.Buffer
		text := NewText(&out, &out, plain(), plain())
		text.TimeUnit = c.unit
		text.Benchmark(0, Result{Command: "a", Runs: c.runs}.Preview(time.Millisecond, nil))
		if !strings.Contains(out.String(), c.want) {
			t.Errorf("%s: no\n%q in\n%s", c.what, c.want, out.String())
		}
	}
}

// Benchmarks that differ in a parameter the command does not use are
// named apart in the blocks and the summary, as hyperfine names them;
// the summary's ratio is right aligned in 8 columns, as hyperfine's.
func TestTheTextNamesTheUnusedParameters(t *testing.T) {
	rep := NewReport(100 * time.Millisecond)
	rep.Results = []Result{
		{Command: "echo test", label: "echo test (branch = master)", Runs: []Run{runOf(1, 1), runOf(1.2, 1)}},
		{Command: "echo test", label: "echo test (branch = feature)", Runs: []Run{runOf(12, 1), runOf(12.2, 1)}},
	}
	rep.Finish(-1)
	var out bytes.Buffer
	if err := WriteText(&out, rep, plain()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Benchmark 1: echo test (branch = master)\n", "Benchmark 2: echo test (branch = feature)\n",
		"\nSummary\n  echo test (branch = master) ran\n   11.00 ± 1.42 times less energy than echo test (branch = feature)\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in\n%s", want, out.String())
		}
	}
	var md bytes.Buffer
	WriteMarkdown(&md, rep)
	var csv bytes.Buffer
	WriteCSV(&csv, rep)
	if !strings.Contains(md.String(), "| `echo test (branch = feature)` |") || strings.Contains(csv.String(), "(branch") {
		t.Errorf("the tables name it, CSV keeps the command and the parameter apart:\n%s\n%s", md.String(), csv.String())
	}
}

// --sort command writes hyperfine's relative table in place of the
// summary, in the commands' order: the ratio in 10 columns, its error in
// 5 after " ± ", the reference's left blank (hyperfine's test
// speed_comparison_sort_order).
func TestSortCommandWritesHyperfinesRelativeTable(t *testing.T) {
	rep := NewReport(100 * time.Millisecond)
	rep.Results = []Result{
		{Command: "sleep 2", Runs: []Run{runOf(2, 2), runOf(2, 2)}},
		{Command: "sleep 1", Runs: []Run{runOf(1, 1), runOf(1, 1)}},
		{Command: "one run", Runs: []Run{runOf(3, 3)}},
	}
	rep.Sort = SortCommand
	rep.Finish(-1)
	var out bytes.Buffer
	if err := WriteText(&out, rep, plain()); err != nil {
		t.Fatal(err)
	}
	want := "\nRelative energy comparison\n        2.00 ±  0.00  sleep 2\n        1.00          sleep 1\n        3.00          one run\n"
	if !strings.HasSuffix(out.String(), want) || strings.Contains(out.String(), "Summary") {
		t.Errorf("text\n%s\nwant it to end\n%s", out.String(), want)
	}
}
