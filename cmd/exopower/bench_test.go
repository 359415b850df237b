package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/bench"
	"github.com/exopower/exopower/internal/fakepm"
)

// benchJSON runs exopower bench with the fake at profile and returns its
// --json report.
func benchJSON(t *testing.T, profile string, args ...string) *bench.Report {
	t.Helper()
	cmd, _ := exopowerCmd(t, append([]string{"bench", "--json"}, args...)...)
	cmd.Env = append(cmd.Env, "FAKEPM_PROFILE="+profile)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("exopower bench: %v", err)
	}
	var rep bench.Report
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	return &rep
}

// halfHigh is high for the first half of every second, low for the
// other; toSecond, as a --prepare, waits for the next whole second, so
// that each run starts with the high half.
const (
	halfHigh = "period=1 0=12,4,1 0.5=1,0.4,0.1"
	toSecond = `n=$(date +%s%N); sleep $(printf '0.%09d' $((1000000000 - n % 1000000000)))`
)

func spanOf(t *testing.T, startedAt string, seconds float64) (time.Time, time.Time) {
	t.Helper()
	start, err := time.Parse(time.RFC3339Nano, startedAt)
	if err != nil {
		t.Fatal(err)
	}
	return start, start.Add(time.Duration(seconds * 1e9))
}

func within(t *testing.T, what string, got, want, percent float64) {
	t.Helper()
	t.Logf("%s %.5f, true %.5f", what, got, want)
	if math.Abs(got-want) > math.Abs(want)*percent/100 {
		t.Errorf("%s %.5f, true %.5f: off by more than %v%%", what, got, want, percent)
	}
}

// The prepare command waits for the next whole second, so that each run
// (0.3 s) falls in the profile's high half (12+4+1 W for 0.5 s, then
// 1+0.4+0.1 W): its net energy over the idle Mac is then large, and each
// run's energy, the idle power and the net energy are held against the
// profile's exact integral over the spans exopower reports.
func TestBenchEnergiesAgainstTheProfile(t *testing.T) {
	t.Parallel()
	prof, err := fakepm.ParseProfile(halfHigh)
	if err != nil {
		t.Fatal(err)
	}
	rep := benchJSON(t, halfHigh, "-r", "3", "--baseline", "1s", "-p", toSecond, "sleep 0.3")
	if rep.Type != "bench" || rep.SchemaVersion != 1 || !rep.Complete || rep.Baseline == nil || rep.Baseline.After == nil {
		t.Fatalf("report %+v", rep)
	}
	var idleJ, idleS float64
	// The idle spans are measured in pieces of 0.5 s, each cut at both
	// ends by a sample asked for there: on a loaded machine (the race
	// detector's tests beside) the fake answers up to some 6 ms late,
	// and where the profile steps by 15.5 W that is up to 2 % of a
	// piece's energy at each cut. 4 %.
	const idlePercent = 4
	for _, sp := range []*bench.Idle{rep.Baseline.Before, rep.Baseline.After} {
		from, to := spanOf(t, sp.StartedAt, float64(sp.DurationSeconds))
		e := prof.Energy(from, to).Total()
		within(t, "idle power", float64(sp.PowerWatts), e/to.Sub(from).Seconds(), idlePercent)
		idleJ, idleS = idleJ+e, idleS+to.Sub(from).Seconds()
	}
	idle := idleJ / idleS
	within(t, "pooled idle power", float64(rep.Baseline.PowerWatts), idle, idlePercent)
	r := rep.Results[0]
	if len(r.Runs) != 3 {
		t.Fatalf("%d runs, want 3", len(r.Runs))
	}
	for _, run := range r.Runs {
		from, to := spanOf(t, run.StartedAt, float64(run.DurationSeconds))
		truth := prof.Energy(from, to).Total()
		within(t, "energy", float64(run.EnergyJoules.Total), truth, 1)
		// The net energy's error is the run's and the idle power's over
		// the run's length: each bounded as above.
		d := to.Sub(from).Seconds()
		withinJoules(t, "net energy", float64(*run.NetEnergyJoules), truth-idle*d, truth/100+idle*d*idlePercent/100)
		if got, want := float64(*run.NetEnergyUncertaintyJoules), float64(*rep.Baseline.StandardErrorWatts)*float64(run.DurationSeconds); math.Abs(got-want) > 1e-9 {
			t.Errorf("net energy's uncertainty %v, want the idle error over the run, %v", got, want)
		}
	}
}

// At a constant power every window reads the same but for the rounding of
// its energy to whole millijoules (as powermetrics writes it: up to 0.5 mJ
// for each of three components, over windows of 86 ms and more): the idle
// power is that power, its standard error no more than the rounding's, and
// the net energy of a run nothing.
func TestBenchBaselineOfAConstantPower(t *testing.T) {
	t.Parallel()
	rep := benchJSON(t, "0=3,1,0.5", "-r", "2", "--baseline", "1s", "sleep 0.2")
	b := rep.Baseline
	// Each window's energy is whole millijoules, three components each
	// rounded by up to 0.5 mJ. The idle power weighs each window's power
	// by its length, so it is the windows' energy over their time: off by
	// at most 1.5 mJ a window over the time of the spans (short windows
	// at the edges, where samples were asked for, included).
	n := float64(b.Before.Windows + b.After.Windows)
	secs := float64(b.Before.DurationSeconds + b.After.DurationSeconds)
	within(t, "idle power", float64(b.PowerWatts), 4.5, 100*0.0015*n/secs/4.5)
	bound := 0.0015 / 0.086 / math.Sqrt(float64(b.Before.Windows+b.After.Windows-2))
	if se := float64(*b.StandardErrorWatts); se > bound {
		t.Errorf("standard error %v W of a constant power, more than the rounding's %v W", se, bound)
	}
	if len(rep.Warnings) != 0 {
		t.Errorf("warnings %q", rep.Warnings)
	}
	if rep.Source.HWModel != "MacBookPro17,1" || rep.Source.OSBuild == "" {
		t.Errorf("source %+v: want the machine the stream names", rep.Source)
	}
	for _, run := range rep.Results[0].Runs {
		if net := float64(*run.NetEnergyJoules); math.Abs(net) > 0.01*float64(run.EnergyJoules.Total) {
			t.Errorf("net energy %v J at a constant power", net)
		}
	}
}

// A square wave of 10 ms period (2 W and 4 W) under windows of about
// 100 ms: each window's average is 3 W give or take half a period's
// swing over the window, at most 1 W × 5 ms / 86 ms (the shortest
// window), and the millijoules' rounding (1.5 mJ / 86 ms). The baseline's
// standard error must show that spread, no more.
func TestBenchBaselineErrorOfANoisyPower(t *testing.T) {
	t.Parallel()
	rep := benchJSON(t, "period=0.01 0=2,0,0 0.005=4,0,0", "-r", "1", "--baseline", "1s", "true")
	b := rep.Baseline
	within(t, "idle power", float64(b.PowerWatts), 3, 1)
	n := float64(b.Before.Windows + b.After.Windows)
	bound := (1*0.005 + 0.0015) / 0.086 / math.Sqrt(n-2)
	se := float64(*b.StandardErrorWatts)
	t.Logf("standard error %.5f W over %v windows, bound %.5f W", se, n, bound)
	if !(se > 0) || se > bound {
		t.Errorf("standard error %v W, want above 0 and at most %v W", se, bound)
	}
}

func TestBenchExports(t *testing.T) {
	t.Parallel()
	cmd, dir := exopowerCmd(t, "bench", "-r", "2", "--baseline", "0", "--export-json", "b.json", "--export-csv", "b.csv",
		"--export-markdown", "b.md", "true", "sleep 0.2")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var rep bench.Report
	b, err := os.ReadFile(filepath.Join(dir, "b.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Baseline != nil || len(rep.Results) != 2 || rep.Reference == nil || *rep.Reference != 0 || rep.Results[1].RelativeEnergy == nil {
		t.Errorf("export: %s", b)
	}
	for _, f := range []string{"b.csv", "b.md"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// Ctrl-C in the middle ends the bench once the running command ends: the
// runs made by then are summarised and exported, marked incomplete, and
// exopower exits 130 as a shell reports SIGINT.
func TestBenchInterruptKeepsTheRunsSoFar(t *testing.T) {
	t.Parallel()
	cmd, dir := exopowerCmd(t, "bench", "--json", "-r", "50", "--baseline", "0", "--export-json", "b.json",
		`echo x >> n; [ $(wc -l < n) -ge 2 ] && touch second; sleep 0.3`)
	var out strings.Builder
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFile(t, filepath.Join(dir, "second"))
	cmd.Process.Signal(syscall.SIGINT)
	if code := exitCode(t, cmd.Wait()); code != 130 {
		t.Errorf("exit status %d, want 130", code)
	}
	for _, b := range []string{out.String(), readFile(t, filepath.Join(dir, "b.json"))} {
		var rep bench.Report
		if err := json.Unmarshal([]byte(b), &rep); err != nil {
			t.Fatalf("%v: %q", err, b)
		}
		if rep.Complete || len(rep.Results) != 1 || len(rep.Results[0].Runs) < 1 || len(rep.Results[0].Runs) >= 50 {
			t.Errorf("report after Ctrl-C: %s", b)
		}
	}
	if err := fakepm.Gone(filepath.Join(dir, "powermetrics.pid")); err != nil {
		t.Error(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A command that prints how much work it did: each run's energy per token
// is that run's energy over the 512 tokens it printed, and the energy is
// the profile's over the run's span; a run that printed no count has no
// units, and the summary says so.
func TestBenchEnergyPerUnitFromTheOutput(t *testing.T) {
	t.Parallel()
	prof, err := fakepm.ParseProfile(halfHigh)
	if err != nil {
		t.Fatal(err)
	}
	rep := benchJSON(t, halfHigh, "-r", "3", "--baseline", "0", "-p", toSecond, "--units-from", `generated ([0-9]+) tokens`, "--unit", "token",
		"echo loading; sleep 0.3; echo generated 512 tokens", `[ -e once ] && echo generated 100 tokens; touch once`)
	if rep.Unit == nil || *rep.Unit != "token" || len(rep.Results) != 2 {
		t.Fatalf("report %+v", rep)
	}
	r := rep.Results[0]
	var perToken []float64
	for _, run := range r.Runs {
		if run.Units == nil || float64(*run.Units) != 512 {
			t.Fatalf("run's units %v, want 512", run.Units)
		}
		from, to := spanOf(t, run.StartedAt, float64(run.DurationSeconds))
		within(t, "energy", float64(run.EnergyJoules.Total), prof.Energy(from, to).Total(), 1)
		within(t, "J/token against the truth", float64(run.EnergyJoules.Total)/512, prof.Energy(from, to).Total()/512, 1)
		perToken = append(perToken, float64(run.EnergyJoules.Total)/512)
	}
	want := bench.Summarize(perToken)
	if r.EnergyPerUnitJoules == nil || math.Abs(float64(r.EnergyPerUnitJoules.Mean)-want.Mean) > 1e-9*want.Mean ||
		math.Abs(float64(*r.EnergyPerUnitJoules.Stddev)-want.Stddev) > 1e-9*want.Mean {
		t.Errorf("J/token %+v, want mean %v σ %v", r.EnergyPerUnitJoules, want.Mean, want.Stddev)
	}
	if r.UnitsPerJoule == nil || r.RunsWithoutUnits != 0 {
		t.Errorf("tokens/J %+v, runs without units %d", r.UnitsPerJoule, r.RunsWithoutUnits)
	}
	r = rep.Results[1]
	if r.Runs[0].Units != nil || r.Runs[1].Units == nil || float64(*r.Runs[1].Units) != 100 || r.RunsWithoutUnits != 1 {
		t.Errorf("second command's units: %v, %v; %d runs without", r.Runs[0].Units, r.Runs[1].Units, r.RunsWithoutUnits)
	}
	if w := strings.Join(r.Warnings, "\n"); !strings.Contains(w, "1 run of 3 printed no count of tokens") {
		t.Errorf("warnings %q", w)
	}
}

// --units gives every run the same count.
func TestBenchEnergyPerUnitGiven(t *testing.T) {
	t.Parallel()
	rep := benchJSON(t, "0=3,1,0.5", "-r", "2", "--baseline", "0", "--units", "4", "--unit", "image", "sleep 0.2")
	r := rep.Results[0]
	for _, run := range r.Runs {
		if run.Units == nil || float64(*run.Units) != 4 {
			t.Errorf("run's units %v, want 4", run.Units)
		}
	}
	e := float64(r.EnergyJoules.Mean)
	if r.EnergyPerUnitJoules == nil || math.Abs(float64(r.EnergyPerUnitJoules.Mean)-e/4) > 1e-9*e {
		t.Errorf("J/image %+v, want %v", r.EnergyPerUnitJoules, e/4)
	}
}

// -L runs a command once per value, with {NAME} replaced in it and in its
// hooks, and names the value in parameters.
func TestBenchParameterList(t *testing.T) {
	t.Parallel()
	cmd, dir := exopowerCmd(t, "bench", "--json", "-r", "1", "--baseline", "0", "-L", "n", "1,2,3",
		"--setup", "echo setup {n} >> log", "echo run {n} >> log")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("exopower bench: %v", err)
	}
	var rep bench.Report
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 3 {
		t.Fatalf("%d results, want 3: %s", len(rep.Results), out)
	}
	for i, r := range rep.Results {
		n := string(rune('1' + i))
		if r.Command != "echo run "+n+" >> log" || r.Parameters["n"] != n || len(r.Parameters) != 1 {
			t.Errorf("result %d: command %q, parameters %v", i, r.Command, r.Parameters)
		}
	}
	if got, want := readFile(t, filepath.Join(dir, "log")), "setup 1\nrun 1\nsetup 2\nrun 2\nsetup 3\nrun 3\n"; got != want {
		t.Errorf("log %q, want %q", got, want)
	}
}

// --cooldown idles between runs: by the runs' own timestamps, each starts
// at least the cooldown after the one before it ended.
func TestBenchCooldownBetweenRuns(t *testing.T) {
	t.Parallel()
	const cooldown = 400 * time.Millisecond
	rep := benchJSON(t, "0=3,1,0.5", "-r", "3", "--baseline", "0", "--cooldown", cooldown.String(), "sleep 0.1")
	runs := rep.Results[0].Runs
	if len(runs) != 3 {
		t.Fatalf("%d runs, want 3", len(runs))
	}
	for k := 1; k < len(runs); k++ {
		_, ended := spanOf(t, runs[k-1].StartedAt, float64(runs[k-1].DurationSeconds))
		next, _ := spanOf(t, runs[k].StartedAt, float64(runs[k].DurationSeconds))
		if gap := next.Sub(ended); gap < cooldown {
			t.Errorf("run %d started %v after run %d ended, less than the cooldown %v", k+1, gap, k, cooldown)
		}
	}
}
