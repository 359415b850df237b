package main

import (
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exopower/exopower/internal/heavytest"
)

// hyperfineScripts holds hyperfine's scripts, copied unchanged (see its
// README).
var hyperfineScripts = filepath.Join("..", "..", "testdata", "hyperfine-scripts")

// needPython returns a python3 that imports numpy, matplotlib and scipy,
// what hyperfine's scripts need: $EXOPOWER_PYTHON, else python3 in PATH
// or /usr/bin/python3 (a python3 of pyenv's, first in PATH, may lack
// what Debian's has). Without one the test skips, but in CI (CI set
// non-empty), where .ci/run installs Debian's python3-matplotlib,
// python3-numpy and python3-scipy, and when EXOPOWER_PYTHON names one:
// there it fails, as a run that never met the scripts must not pass for
// one that did.
func needPython(t *testing.T) string {
	t.Helper()
	asked := os.Getenv("EXOPOWER_PYTHON")
	candidates := []string{asked}
	if asked == "" {
		candidates = []string{"python3", "/usr/bin/python3"}
	}
	var problems []string
	for _, c := range candidates {
		out, err := exec.Command(c, "-c", "import numpy, matplotlib, scipy").CombinedOutput()
		if err == nil {
			return c
		}
		problems = append(problems, fmt.Sprintf("%s: %v %s", c, err, strings.TrimSpace(string(out))))
	}
	msg := "no python3 with numpy, matplotlib and scipy (Debian: apt-get install python3-numpy python3-matplotlib python3-scipy):\n" + strings.Join(problems, "\n")
	switch {
	case asked != "":
		t.Fatalf("EXOPOWER_PYTHON=%s: %s", asked, msg)
	case os.Getenv("CI") != "":
		t.Fatalf("CI is set, and in CI hyperfine's scripts run, not skip (bash .ci/run installs what they need): %s", msg)
	}
	t.Skip(msg)
	return ""
}

// Every script of hyperfine's scripts/ reads what exopower bench
// --export-json writes as it reads hyperfine's own: each runs with its
// usual arguments, exits 0 and writes its picture or its report.
func TestHeavyHyperfinesScriptsReadExopowersExports(t *testing.T) {
	t.Parallel()      // the benches wait on the fake in real time
	heavytest.Skip(t) // its time goes to Prometheus or Python and to exopower's processes: .ci/run runs it without the race detector
	python := needPython(t)
	scripts, err := filepath.Abs(hyperfineScripts)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	export := func(name string, args ...string) string {
		t.Helper()
		path := filepath.Join(dir, name)
		cmd, _ := exopowerCmd(t, append([]string{"bench", "--baseline", "0", "--export-json", path}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("exopower bench %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return path
	}
	// plot_progression's moving average wants 5 runs and more, as
	// hyperfine's 10 by default.
	two := export("two.json", "-r", "10", "sleep 0.01", "sleep 0.02")
	again := export("again.json", "-r", "3", "sleep 0.01", "sleep 0.02")
	param := export("param.json", "-r", "3", "-L", "n", "1,2,3", "sleep 0.0{n}")
	for _, tc := range []struct {
		script string
		args   []string
		// picture is the PNG it writes; stdout what it prints.
		picture, stdout string
	}{
		{"advanced_statistics.py", []string{two}, "", "Command 'sleep 0.02'\n  runs:         10\n"},
		{"welch_ttest.py", []string{two}, "", "Command 1: sleep 0.01\nCommand 2: sleep 0.02\n"},
		{"plot_whisker.py", []string{two, "--title", "sleep", "-o", "whisker.png"}, "whisker.png", ""},
		{"plot_histogram.py", []string{two, "-o", "histogram.png"}, "histogram.png", ""},
		{"plot_progression.py", []string{two, "-o", "progression.png"}, "progression.png", ""},
		{"plot_benchmark_comparison.py", []string{two, again, "-o", "comparison.png"}, "comparison.png", ""},
		{"plot_parametrized.py", []string{param, "-o", "parametrized.png"}, "parametrized.png", ""},
	} {
		cmd := exec.Command(python, append([]string{filepath.Join(scripts, tc.script)}, tc.args...)...)
		cmd.Dir = dir
		// No display: matplotlib draws to files only.
		cmd.Env = append(os.Environ(), "MPLBACKEND=Agg")
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Errorf("%s %s: %v\n%s", tc.script, strings.Join(tc.args, " "), err, stderr.String())
			continue
		}
		if !strings.Contains(stdout.String(), tc.stdout) {
			t.Errorf("%s printed\n%s\nwant it to hold\n%s", tc.script, stdout.String(), tc.stdout)
		}
		if tc.picture == "" {
			continue
		}
		f, err := os.Open(filepath.Join(dir, tc.picture))
		if err != nil {
			t.Errorf("%s: %v", tc.script, err)
			continue
		}
		cfg, err := png.DecodeConfig(f)
		f.Close()
		if err != nil || cfg.Width == 0 || cfg.Height == 0 {
			t.Errorf("%s wrote %s: not a PNG (%v, %dx%d)", tc.script, tc.picture, err, cfg.Width, cfg.Height)
		}
	}
}
