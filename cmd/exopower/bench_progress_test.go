package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/bench"
	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/fakepm"
)

// benchInProcess runs exopower bench in process with stderr a terminal
// or not, and returns what it wrote to stdout and stderr.
func benchInProcess(t *testing.T, errTTY bool, o *benchOptions) (string, string) {
	t.Helper()
	dir := t.TempDir()
	env := map[string]string{"EXOPOWER_POWERMETRICS": "fake-powermetrics", "PATH": os.Getenv("PATH"), "NO_COLOR": "1",
		"FAKEPM_PROFILE": fakepm.DefaultProfile, "FAKEPM_PIDFILE": filepath.Join(dir, "powermetrics.pid")}
	var out, errs bytes.Buffer
	s := &cli.Streams{Out: &out, Err: &errs, ErrTTY: errTTY, Getenv: func(k string) string { return env[k] }, Environ: os.Environ}
	o.interval = 100 * time.Millisecond
	if err := runBench(context.Background(), s, o); err != nil {
		t.Fatalf("bench: %v\n%s", err, errs.String())
	}
	return out.String(), errs.String()
}

// On a terminal the progress line is redrawn in place for each run,
// names the command, run k of N and the last run's energy, and is
// cleared before the command's block and its warnings are written.
func TestBenchProgressOnATerminal(t *testing.T) {
	out, errs := benchInProcess(t, true, &benchOptions{Options: bench.Options{Runs: 3, Shell: "sh", Unit: "unit", Commands: []string{"sleep 0.1"}}})
	for _, want := range []string{`\rsleep 0.1: run 1 of 3, estimating the time left\x1b\[K`,
		`\rsleep 0.1: run 2 of 3, about [0-9hms.]+ left, last [0-9.]+ J\x1b\[K`,
		`\rsleep 0.1: run 3 of 3, about [0-9hms.]+ left, last [0-9.]+ J\x1b\[K`} {
		if !regexp.MustCompile(want).MatchString(errs) {
			t.Errorf("stderr lacks %q:\n%q", want, errs)
		}
	}
	if !regexp.MustCompile(`run 3 of 3, [^\r]*\x1b\[K\r\x1b\[K(exopower: warning: [^\r]*\n)*$`).MatchString(errs) {
		t.Errorf("the line is not cleared before the block and its warnings: %q", errs)
	}
	if !strings.HasPrefix(out, "Benchmark 1: sleep 0.1\n") || !strings.Contains(out, " 3 runs\n") {
		t.Errorf("stdout %q", out)
	}
}

// Not on a terminal, there is nothing of it.
func TestBenchNoProgressOffATerminal(t *testing.T) {
	_, errs := benchInProcess(t, false, &benchOptions{Options: bench.Options{Runs: 2, Shell: "sh", Unit: "unit", Commands: []string{"sleep 0.1"}}})
	if strings.Contains(errs, "run 1 of") || strings.Contains(errs, "\r") || strings.Contains(errs, "\x1b") {
		t.Errorf("progress on a stderr that is no terminal: %q", errs)
	}
}
