package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/exopower/exopower/internal/attrib"
	"github.com/exopower/exopower/internal/fakellm"
	"github.com/exopower/exopower/internal/fakepm"
	"github.com/exopower/exopower/internal/heavytest"
	"github.com/exopower/exopower/internal/ioreport"
	"github.com/exopower/exopower/internal/keys"
	"github.com/exopower/exopower/internal/wire"
)

// TestMain makes the test binary stand in for exopower, the fake
// powermetrics and the scripts' helpers, by the name it is run under.
// Run as exopower with EXOPOWER_FAKE_IOREPORT set, it reads the fake
// IOReport (over FAKEPM_PROFILE, by default the fake powermetrics's square
// wave, with the spans of FAKEPM_OVERRIDES, as FAKEPM_IOREPORT says) for
// --source ioreport.
func TestMain(m *testing.M) {
	if os.Getenv("EXOPOWER_FAKE_IOREPORT") != "" {
		openIOReport = func() (ioreport.Library, error) {
			prof, err := fakepm.ParseProfile(cmp.Or(os.Getenv("FAKEPM_PROFILE"), fakepm.DefaultProfile))
			if err != nil {
				return nil, err
			}
			live := fakepm.LivePower{Profile: prof, Overrides: os.Getenv(fakepm.OverridesEnv)}
			return fakepm.NewLiveIOReport(live, os.Getenv("FAKEPM_IOREPORT"), nil), nil
		}
	}
	if serial := os.Getenv("EXOPOWER_FAKE_SERIAL"); serial != "" {
		// This Mac's serial number, for calibrate and the estimate of the
		// wall: Linux has none to read.
		readSerial = func() (string, error) { return serial, nil }
	}
	if os.Getenv("EXOPOWER_TEST_KEYS") == "" {
		// The in-process tests draw on fake terminals: the keys of the
		// terminal the tests run in (a developer's) are not theirs to
		// read, nor its settings theirs to change. The tests that drive
		// a terminal in tmux set the variable.
		openKeys = func() (*keys.Reader, error) { return nil, keys.ErrNoTerminal }
	}
	if table := os.Getenv(fakepm.ProcessesEnv); table != "" {
		openKernel = func() (attrib.Kernel, error) { return fakepm.ProcessesFor(table) }
	}
	testscript.Main(plainFake{m}, map[string]func(){
		"exopower":          main,
		"fake-powermetrics": func() { os.Exit(fakepm.Main(os.Args[1:], os.Stdout, os.Stderr, os.Getenv)) },
		"fake-openai":       fakeOpenAIMain,
		"span":              spanMain,
		"jsonget":           jsongetMain,
	})
}

// fakeOpenAIMain is scripts/fake-openai: the fake model server until
// SIGINT or SIGTERM.
func fakeOpenAIMain() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := fakellm.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// plainExopowerEnv names the environment variable that gives the path
// of this package's test binary built without the race detector, named
// exopower, which .ci/run builds: the end-to-end tests then start it as
// exopower rather than this race-instrumented binary. They start
// exopower hundreds of times, each race-instrumented start and run costs
// several times a plain one's CPU, and the CPU is what bounds the suite
// on a 2-core machine. The race detector still reads every package's own
// tests, where exopower's concurrency lives (the sampler, serve, the
// cluster, llm, bench, wall, child), and this package's tests that run
// in process; without the variable (go test -race ./cmd/exopower), the
// exopower started is race-instrumented too.
const plainExopowerEnv = "EXOPOWER_TEST_EXOPOWER"

// plainFake runs the tests with the plain fake powermetrics and the
// plain exopower, where there are (fakepm.Plain, plainExopowerEnv),
// first in PATH: before the folder of this binary's commands, which
// testscript.Main puts there before it runs them.
type plainFake struct{ m *testing.M }

func (p plainFake) Run() int {
	for env, name := range map[string]string{fakepm.PlainEnv: "fake-powermetrics", plainExopowerEnv: "exopower"} {
		path := os.Getenv(env)
		if path == "" {
			continue
		}
		if filepath.Base(path) != name || !filepath.IsAbs(path) {
			fmt.Fprintf(os.Stderr, "%s=%s: want the absolute path of a file named %s\n", env, path, name)
			return 2
		}
		os.Setenv("PATH", filepath.Dir(path)+string(filepath.ListSeparator)+os.Getenv("PATH"))
	}
	return p.m.Run()
}

func TestScripts(t *testing.T) {
	// Beside the other tests that wait on real time, not after them.
	t.Parallel()
	testscript.Run(t, scripts("testdata"))
}

// TestHeavyScripts are the scripts that push megabytes through exopower:
// they run without the race detector (internal/heavytest).
func TestHeavyScripts(t *testing.T) {
	heavytest.Skip(t)
	t.Parallel()
	testscript.Run(t, scripts(filepath.Join("testdata", "heavy")))
}

// scripts are the parameters of the scripts in dir.
func scripts(dir string) testscript.Params {
	return testscript.Params{
		Dir:                 dir,
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("EXOPOWER_POWERMETRICS", "fake-powermetrics")
			env.Setenv("FAKEPM_PIDFILE", env.WorkDir+"/powermetrics.pid")
			env.Setenv("FAKEPM_PROFILE", fakepm.DefaultProfile)
			testdata, err := filepath.Abs(filepath.Join("..", "..", "testdata"))
			if err != nil {
				return err
			}
			env.Setenv("TESTDATA", testdata)
			if os.Geteuid() == 0 {
				// As if root had run sudo: the commands run as root, with
				// no note about it. run_privileges.txtar sets its own.
				env.Setenv("SUDO_UID", "0")
				env.Setenv("SUDO_GID", "0")
			}
			return nil
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "root":
				return os.Geteuid() == 0, nil
			case "genman": // built with -tags genman, as scripts/man.sh builds it
				return genManCmd != nil, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"waitfile": cmdWaitfile,
			"gone":     cmdGone,
			"truth":    cmdTruth,
			"killpid":  cmdKillpid,
		},
	}
}

// spanMain is a command whose energy is known: it writes the wall-clock
// times of its own start and end to a file, with a duration in between.
//
//	span FILE SECONDS
func spanMain() {
	start := time.Now()
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: span FILE SECONDS")
		os.Exit(2)
	}
	secs, err := strconv.ParseFloat(os.Args[2], 64)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Println("span: working")
	time.Sleep(time.Duration(secs * float64(time.Second)))
	end := time.Now()
	if err := os.WriteFile(os.Args[1], fmt.Appendf(nil, "%d %d\n", start.UnixNano(), end.UnixNano()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// jsongetMain reads one JSON object on stdin and prints the value at a
// dotted path, as jq -c would.
//
//	jsonget PATH
func jsongetMain() {
	var v any
	if err := json.NewDecoder(os.Stdin).Decode(&v); err != nil {
		fmt.Fprintln(os.Stderr, "jsonget:", err)
		os.Exit(1)
	}
	for _, k := range strings.Split(os.Args[1], ".") {
		m, ok := v.(map[string]any)
		if !ok {
			fmt.Fprintf(os.Stderr, "jsonget: %s: not an object\n", k)
			os.Exit(1)
		}
		if v, ok = m[k]; !ok {
			fmt.Fprintf(os.Stderr, "jsonget: no key %s\n", k)
			os.Exit(1)
		}
	}
	b, _ := json.Marshal(v)
	fmt.Println(string(b))
}

// cmdWaitfile waits for a file to exist: the scripts' way to know that a
// background command got where it should be.
func cmdWaitfile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitfile FILE")
	}
	if err := waitForFile(ts.MkAbs(args[0])); err != nil {
		ts.Fatalf("%v", err)
	}
}

// cmdGone checks that the process whose id is in a file is no longer there.
func cmdGone(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: gone PIDFILE")
	}
	if err := fakepm.Gone(ts.MkAbs(args[0])); err != nil {
		ts.Fatalf("%v", err)
	}
}

// cmdKillpid kills the process whose id is in a file: what a script left
// running on purpose does not outlive the test.
func cmdKillpid(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: killpid PIDFILE")
	}
	pid, err := fakepm.ReadPid(ts.MkAbs(args[0]))
	if err != nil {
		ts.Fatalf("%v", err)
	}
	syscall.Kill(pid, syscall.SIGKILL)
}

// waitForFile waits for path to exist, polling, for at most a minute.
func waitForFile(path string) error {
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := os.Stat(path); err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not appear", path)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// cmdTruth holds a run's summary against the true energy of the fake's
// profile over the span exopower reports, and checks that the span holds
// the whole of the command's own (recorded by span).
//
//	truth SPANFILE SUMMARY.json PERCENT
func cmdTruth(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: truth SPANFILE SUMMARY.json PERCENT")
	}
	var inner [2]int64
	if _, err := fmt.Sscan(ts.ReadFile(args[0]), &inner[0], &inner[1]); err != nil {
		ts.Fatalf("span file: %v", err)
	}
	var sum wire.Summary
	if err := json.Unmarshal([]byte(ts.ReadFile(args[1])), &sum); err != nil {
		ts.Fatalf("summary: %v", err)
	}
	tol, _ := strconv.ParseFloat(args[2], 64)
	prof, err := fakepm.ParseProfile(ts.Getenv("FAKEPM_PROFILE"))
	if err != nil {
		ts.Fatalf("%v", err)
	}
	start, err := time.Parse(time.RFC3339Nano, sum.StartedAt)
	if err != nil {
		ts.Fatalf("started_at: %v", err)
	}
	end := start.Add(time.Duration(float64(sum.DurationSeconds) * 1e9))
	if start.UnixNano() > inner[0] || end.UnixNano() < inner[1] {
		ts.Fatalf("measured span [%v, %v] does not hold the command's own [%v, %v]",
			start, end, time.Unix(0, inner[0]), time.Unix(0, inner[1]))
	}
	near, errs := fakepm.CheckEnergy("energy", sum.EnergyJoules, prof, start, end, tol)
	ts.Logf("%s, over %.3f s", near, float64(sum.DurationSeconds))
	if len(errs) > 0 {
		ts.Fatalf("%s", strings.Join(errs, "\n"))
	}
}
