package bench

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/wire"
)

// fakeMeter is a Meter of made-up numbers, as hyperfine's MockExecutor:
// each run's energy is its index among the runs (1, 2, 3...) joules over
// a second, and the idle machine draws 0.5 W. It notes what was asked of
// it, in order.
type fakeMeter struct {
	calls  []string
	runs   int
	open   bool
	closed bool
	failAt int // Begin fails at this run (from 1); 0: never
	pieces int // the idle pieces measured
	// idle is the power of the idle piece k (from 1); nil: by turns.
	idle func(k int) float64
}

func (m *fakeMeter) Begin(context.Context) error {
	if m.open {
		return errors.New("a span opened over an open one")
	}
	if m.runs+1 == m.failAt {
		return errors.New("node lost")
	}
	m.open = true
	m.calls = append(m.calls, "begin")
	return nil
}

func (m *fakeMeter) End(_ context.Context, at time.Time, status int, signal string) Run {
	m.open = false
	m.runs++
	m.calls = append(m.calls, "end")
	e := wire.Num(m.runs)
	return Run{StartedAt: at.Add(-time.Second).UTC().Format(time.RFC3339Nano), DurationSeconds: 1,
		EnergyJoules: wire.Components{Total: e, CPU: e}, AvgPowerWatts: wire.Components{Total: e, CPU: e},
		Samples: 10, Coverage: 1, ExitCode: status, Warnings: []string{}}
}

// Idle draws 0.4 W and 0.6 W by turns, a piece each, unless idle says
// otherwise.
func (m *fakeMeter) Idle(_ context.Context, d time.Duration, sleep func(time.Duration) bool) (IdleSpan, error) {
	m.calls = append(m.calls, "idle "+d.String())
	m.pieces++
	w := 0.4 + 0.2*float64(1-m.pieces%2)
	if m.idle != nil {
		w = m.idle(m.pieces)
	}
	return IdleSpan{Start: time.Now(), Window: Window{Seconds: d.Seconds(), Watts: w}, Windows: 5}, nil
}

func (m *fakeMeter) Close() (wire.Source, []string) {
	m.closed = true
	return wire.Source{Tool: "fake"}, []string{"the fake's warning"}
}

// lockedBuffer is the commands' output, read while they write it.
type lockedBuffer struct {
	mu    sync.Mutex
	b     bytes.Buffer
	wrote chan struct{} // a write since the last receive
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	select {
	case l.wrote <- struct{}{}:
	default:
	}
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// runner runs cfg over a fake meter; the commands' output is written to
// out, in the order the commands ran.
func runner(t *testing.T, cfg Config, m *fakeMeter) (*Runner, *lockedBuffer) {
	t.Helper()
	out := &lockedBuffer{wrote: make(chan struct{}, 1)}
	cfg.Argv = func(c string) ([]string, error) { return []string{"sh", "-c", c}, nil }
	cfg.Stdout, cfg.Stderr, cfg.Messages = out, out, out
	cfg.Interval = 100 * time.Millisecond
	if cfg.Identity.Env == nil {
		cfg.Identity.Env = os.Environ()
	}
	if err := cfg.Look(os.Getenv("PATH")); err != nil {
		t.Fatal(err)
	}
	return NewRunner(cfg, m), out
}

// The runner makes each command's runs as spans of the meter, one at a
// time, the reference first, the hooks around them in hyperfine's order,
// and the idle spans before the first run and after the last.
func TestTheRunnerMeasuresEachRunAsASpanOfItsMeter(t *testing.T) {
	m := &fakeMeter{}
	cfg := Config{Jobs: Jobs([]string{"echo b{n}"}, "echo ref", []ParameterList{{Name: "n", Values: []string{"1", "2"}}},
		Hooks{Setup: "echo setup", Prepare: "echo prepare", Conclude: "echo conclude", Cleanup: "echo cleanup"}),
		Runs: 2, Warmup: 1, Baseline: 4 * time.Second}
	r, out := runner(t, cfg, m)
	rep := r.Measure(context.Background())
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	eight := strings.Repeat("idle 500ms,", 8)
	if got, want := strings.Join(m.calls, ","), eight+strings.Repeat("begin,end,", 6)+strings.TrimSuffix(eight, ","); got != want {
		t.Errorf("the meter was asked %s, want %s", got, want)
	}
	oneCommand := "setup\nprepare\n%s\nconclude\nprepare\n%s\nconclude\nprepare\n%s\nconclude\ncleanup\n"
	want := strings.ReplaceAll(oneCommand, "%s", "ref") + strings.ReplaceAll(oneCommand, "%s", "b1") + strings.ReplaceAll(oneCommand, "%s", "b2")
	if out.String() != want {
		t.Errorf("the commands wrote\n%s\nwant\n%s", out.String(), want)
	}
	if len(rep.Results) != 3 || rep.Results[0].Command != "echo ref" || rep.Results[2].Command != "echo b2" || rep.Results[2].Parameters["n"] != "2" {
		t.Fatalf("results %+v", rep.Results)
	}
	for i, res := range rep.Results {
		if len(res.Runs) != 2 || res.Runs[0].EnergyJoules.Total != wire.Num(2*i+1) || res.Runs[1].EnergyJoules.Total != wire.Num(2*i+2) {
			t.Errorf("result %d: runs %+v, want the meter's %d J and %d J", i, res.Runs, 2*i+1, 2*i+2)
		}
	}
	if rep.Baseline == nil || rep.Baseline.PowerWatts != 0.5 || !rep.Complete {
		t.Errorf("baseline %+v, complete %v; want 0.5 W and complete", rep.Baseline, rep.Complete)
	}
	if !m.closed || rep.Source.Tool != "fake" || len(rep.Warnings) != 1 || rep.Warnings[0] != "the fake's warning" {
		t.Errorf("closed %v, source %+v, warnings %q: the meter's close is the report's", m.closed, rep.Source, rep.Warnings)
	}
}

// A run that fails ends the bench with the command's status, the runs so
// far kept, unless failures are ignored.
func TestAFailedRunEndsTheBenchUnlessIgnored(t *testing.T) {
	for _, ignore := range []bool{false, true} {
		m := &fakeMeter{}
		r, _ := runner(t, Config{Jobs: Jobs([]string{"exit 3", "true"}, "", nil, Hooks{}), Runs: 2, IgnoreFailure: Failures{All: ignore}}, m)
		rep := r.Measure(context.Background())
		var e *cli.Error
		switch {
		case !ignore && (!errors.As(r.Err(), &e) || e.Status != 3 || len(rep.Results) != 1 || len(rep.Results[0].Runs) != 1 || rep.Complete):
			t.Errorf("not ignored: err %v, %d results, complete %v; want status 3 after the first run", r.Err(), len(rep.Results), rep.Complete)
		case ignore && (r.Err() != nil || len(rep.Results) != 2 || rep.Results[0].Runs[1].ExitCode != 3 || !rep.Complete):
			t.Errorf("ignored: err %v, results %+v", r.Err(), rep.Results)
		}
	}
}

// A meter that fails to open a span ends the bench with its error, and
// the runs so far.
func TestAMeterThatFailsEndsTheBench(t *testing.T) {
	m := &fakeMeter{failAt: 2}
	r, _ := runner(t, Config{Jobs: Jobs([]string{"true"}, "", nil, Hooks{}), Runs: 3}, m)
	rep := r.Measure(context.Background())
	if r.Err() == nil || r.Err().Error() != "node lost" || len(rep.Results[0].Runs) != 1 || rep.Complete {
		t.Errorf("err %v, runs %d, complete %v; want node lost after 1 run", r.Err(), len(rep.Results[0].Runs), rep.Complete)
	}
}

// A signal during a run is passed to the command, ends the bench once
// it has ended, leaves that run out, and is the bench's status.
func TestASignalEndsTheBenchAfterTheCommand(t *testing.T) {
	sigs := make(chan os.Signal, 1)
	m := &fakeMeter{}
	cfg := Config{Jobs: Jobs([]string{"trap 'echo trapped; exit 0' INT; echo started; while :; do sleep 0.01; done"}, "", nil, Hooks{}), Runs: 3, Signals: sigs}
	r, out := runner(t, cfg, m)
	done := make(chan *Report)
	go func() { done <- r.Measure(context.Background()) }()
	for !strings.Contains(out.String(), "started") {
		<-out.wrote
	}
	sigs <- syscall.SIGINT
	rep := <-done
	var e *cli.Error
	if !errors.As(r.Err(), &e) || e.Status != 130 || len(rep.Results[0].Runs) != 0 || rep.Complete {
		t.Errorf("err %v, runs %d, complete %v; want status 130 and no run", r.Err(), len(rep.Results[0].Runs), rep.Complete)
	}
	if got := out.String(); !strings.Contains(got, "trapped") || !strings.Contains(got, "ending the bench once the command ends") {
		t.Errorf("the command did not get the signal, or nobody said so: %q", got)
	}
}

// The units of work of a run are read from its output.
func TestUnitsAreReadFromEachRunsOutput(t *testing.T) {
	unit := "token"
	r, _ := runner(t, Config{Jobs: Jobs([]string{"echo generated 512 tokens"}, "", nil, Hooks{}), Runs: 1,
		UnitsFrom: regexp.MustCompile(`generated ([0-9]+) tokens`), Unit: &unit}, &fakeMeter{})
	rep := r.Measure(context.Background())
	if u := rep.Results[0].Runs[0].Units; u == nil || *u != 512 {
		t.Errorf("units %v, want 512", u)
	}
}

// Warmup and measured runs know which they are, as hyperfine tells its
// commands in $HYPERFINE_ITERATION; the hooks do not.
func TestEachRunKnowsItsIteration(t *testing.T) {
	t.Setenv("HYPERFINE_ITERATION", "")
	t.Setenv("EXOPOWER_ITERATION", "")
	cfg := Config{Jobs: Jobs([]string{"echo run $EXOPOWER_ITERATION $HYPERFINE_ITERATION"}, "", nil,
		Hooks{Prepare: "echo prepare $EXOPOWER_ITERATION$HYPERFINE_ITERATION"}), Runs: 2, Warmup: 2}
	r, out := runner(t, cfg, &fakeMeter{})
	r.Measure(context.Background())
	want := "prepare\nrun warmup-0 warmup-0\nprepare\nrun warmup-1 warmup-1\nprepare\nrun 0 0\nprepare\nrun 1 1\n"
	if err := r.Err(); err != nil || out.String() != want {
		t.Errorf("err %v, the commands wrote\n%s\nwant\n%s", err, out.String(), want)
	}
}

// --ignore-failure=1,3 measures the runs that end with 1 or 3, and ends
// the bench at any other status, in a warmup run too.
func TestOnlyTheStatusesGivenAreIgnored(t *testing.T) {
	for _, c := range []struct {
		command        string
		warmup, status int
		runs           int
	}{
		{"exit 3", 0, 0, 2},
		{"exit 1", 1, 0, 2},
		{"exit 2", 0, 2, 1},
		{"exit 2", 1, 125, 0},
		{"kill -TERM $$", 0, 143, 1},
	} {
		f := Failures{Codes: []int{1, 3}}
		r, _ := runner(t, Config{Jobs: Jobs([]string{c.command}, "", nil, Hooks{}), Runs: 2, Warmup: c.warmup, IgnoreFailure: f}, &fakeMeter{})
		rep := r.Measure(context.Background())
		status := 0
		var e *cli.Error
		if errors.As(r.Err(), &e) {
			status = e.Status
		}
		if status != c.status || len(rep.Results[0].Runs) != c.runs {
			t.Errorf("%s (warmup %d): status %d (%v), %d runs; want %d, %d runs", c.command, c.warmup, status, r.Err(), len(rep.Results[0].Runs), c.status, c.runs)
		}
	}
	f := Failures{Codes: []int{143}}
	r, _ := runner(t, Config{Jobs: Jobs([]string{"kill -TERM $$"}, "", nil, Hooks{}), Runs: 2, IgnoreFailure: f}, &fakeMeter{})
	if rep := r.Measure(context.Background()); r.Err() != nil || len(rep.Results[0].Runs) != 2 {
		t.Errorf("a run killed by SIGTERM is ignored as 143: %v", r.Err())
	}
}

// hyperfine's rule, from the first run's time: at least the least, as
// many as fill the minimum time, at most the most.
func TestTheRunCountIsHyperfines(t *testing.T) {
	for _, c := range []struct {
		least, most    int
		minTime, first time.Duration
		want           int
	}{
		{10, 0, 3 * time.Second, 0, 10},
		{10, 0, 3 * time.Second, 30 * time.Second, 10},
		{10, 0, 3 * time.Second, 299 * time.Millisecond, 10},
		{10, 0, 3 * time.Second, 100 * time.Millisecond, 30},
		{10, 0, 3 * time.Second, 110 * time.Millisecond, 27},
		{10, 20, 3 * time.Second, 100 * time.Millisecond, 20},
		{3, 3, 3 * time.Second, time.Millisecond, 3},
		{2, 0, 0, time.Millisecond, 2},
		{1, 0, time.Hour, time.Nanosecond, math.MaxInt32},
	} {
		if got := RunCount(c.least, c.most, c.minTime, c.first); got != c.want {
			t.Errorf("RunCount(%d, %d, %v, %v) = %d, want %d", c.least, c.most, c.minTime, c.first, got, c.want)
		}
	}
}

// The count is settled by the first run's time, its prepare and conclude
// included: with 1 s to fill and a first run of 400 ms (by the clock the
// runner reads), 2 runs; no fewer than Runs, no more than MaxRuns.
func TestTheFirstRunSettlesHowManyRunsFollow(t *testing.T) {
	for _, c := range []struct {
		runs, max int
		first     time.Duration
		want      int
	}{
		{1, 0, 400 * time.Millisecond, 2},
		{3, 0, 400 * time.Millisecond, 3},
		{1, 4, 10 * time.Millisecond, 4},
		{1, 0, 2 * time.Second, 1},
	} {
		m := &fakeMeter{}
		r, out := runner(t, Config{Jobs: Jobs([]string{"echo run"}, "", nil, Hooks{Prepare: "echo p", Conclude: "echo c"}),
			Runs: c.runs, MaxRuns: c.max, MinTime: time.Second}, m)
		t0, calls := time.Now(), 0
		r.now = func() time.Time {
			calls++
			if calls == 2 { // after the first run's conclude
				return t0.Add(c.first)
			}
			return t0
		}
		rep := r.Measure(context.Background())
		if got := len(rep.Results[0].Runs); got != c.want || strings.Count(out.String(), "p\nrun\nc\n") != c.want {
			t.Errorf("runs %d, max %d, first %v: %d runs (%q), want %d", c.runs, c.max, c.first, got, out.String(), c.want)
		}
	}
}

// --input: every command reads the file from its start, hooks too.
func TestEveryCommandReadsTheInputFromItsStart(t *testing.T) {
	in := filepath.Join(t.TempDir(), "in")
	if err := os.WriteFile(in, []byte("line 1\nline 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, out := runner(t, Config{Jobs: Jobs([]string{"head -n 1"}, "", nil, Hooks{Setup: "wc -l"}), Runs: 2, Input: in}, &fakeMeter{})
	r.Measure(context.Background())
	if got := strings.ReplaceAll(out.String(), " ", ""); r.Err() != nil || got != "2\nline1\nline1\n" {
		t.Errorf("err %v, the commands wrote %q", r.Err(), got)
	}
	r, out = runner(t, Config{Jobs: Jobs([]string{"cat"}, "", nil, Hooks{}), Runs: 1}, &fakeMeter{})
	if r.Measure(context.Background()); r.Err() != nil || out.String() != "" {
		t.Errorf("without --input: err %v, cat read %q; want the null device's nothing", r.Err(), out.String())
	}
}

// --output: each job's own; a file is made anew for every command that
// writes to it, hooks included, so it keeps the last one's output, as
// hyperfine's; a pipe and null let nothing through.
func TestTheOutputGoesWhereEachJobSays(t *testing.T) {
	dir := t.TempDir()
	file, file2 := filepath.Join(dir, "out"), filepath.Join(dir, "out2")
	jobs, err := Plan{Commands: []string{"echo a; echo a-err >&2", "echo b; echo b-err >&2", "echo c", "echo d", "echo e$HYPERFINE_ITERATION; echo e-err >&2"},
		Conclude: []string{"echo conclude a", "echo conclude b", "echo conclude c", "true", ""},
		Outputs:  []Output{{Kind: OutputPipe}, {Kind: OutputNull}, {}, {Kind: OutputFile, Path: file}, {Kind: OutputFile, Path: file2}}}.Jobs()
	if err != nil {
		t.Fatal(err)
	}
	r, out := runner(t, Config{Jobs: jobs, Runs: 2}, &fakeMeter{})
	r.Measure(context.Background())
	if want := "c\nconclude c\nc\nconclude c\n"; r.Err() != nil || out.String() != want {
		t.Errorf("err %v, the terminal got %q, want %q", r.Err(), out.String(), want)
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "" {
		t.Errorf("the file holds %q (%v), want nothing: the last command that wrote to it, the conclude, wrote nothing", b, err)
	}
	if b, err := os.ReadFile(file2); err != nil || string(b) != "e1\n" {
		t.Errorf("the file holds %q (%v), want the last run's output and not its stderr", b, err)
	}
}
