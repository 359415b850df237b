package main

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"

	"github.com/exopower/exopower/internal/compare"
)

// ciDir holds the CI recipes that docs/ci.md gives.
var ciDir = filepath.Join("..", "..", "docs", "ci")

// The example workflows are valid GitHub Actions, as actionlint reads
// them: their syntax, expressions, the inputs of the actions it knows
// (checkout, cache, upload-artifact, github-script) and the injection of
// untrusted input into scripts. Its shellcheck and pyflakes, programs
// of their own, are not run.
func TestTheCIWorkflowsLint(t *testing.T) {
	t.Parallel()
	paths, err := filepath.Glob(filepath.Join(ciDir, "*.yml"))
	if err != nil || len(paths) < 4 {
		t.Fatalf("workflows %q, %v: want the four of docs/ci.md", paths, err)
	}
	l, err := actionlint.NewLinter(io.Discard, &actionlint.LinterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The linter can fail: a workflow with a misspelt input of a known
	// action and a context that does not exist has its errors.
	broken := "on: push\njobs:\n  a:\n    runs-on: [self-hosted, macOS, ARM64]\n    steps:\n" +
		"      - uses: actions/cache/restore@v4\n        with:\n          path: x\n          key: ${{ github.base_reff }}\n          restore-keyz: x\n"
	if errs, err := l.Lint("broken.yml", []byte(broken), nil); err != nil || len(errs) != 2 {
		t.Fatalf("a broken workflow: %d errors (%v), want 2", len(errs), err)
	}
	for _, p := range paths {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		errs, err := l.Lint(p, src, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range errs {
			t.Errorf("%s", e.Error())
		}
	}
}

// burn is a command for the recipe's benches whose energy is known: for
// its first 0.1 s the fake's CPU draws cpu watts instead of the
// profile's 3 W (its GPU and ANE the profile's 1 W and 0.5 W), through
// the fake's overrides file; noise, when not 0, varies the watts of each
// run by up to ± noise / 2. An override is written a little after the
// time it starts from (the shell and awk take some milliseconds), and
// the fake counts it from then on: an override below the profile's power
// would move a counter back, which exopower rightly takes for a reset.
func burn(cpu, noise float64) string {
	w := strconvFloat(cpu)
	if noise > 0 {
		w = `$(awk -v n="$n" 'BEGIN { srand(n % 1000003); printf "%.4f", ` + w + ` + (rand() - 0.5) * ` + strconvFloat(noise) + ` }')`
	}
	return `n=$(date +%s%N); echo "$n $((n + 100000000)) ` + w + `,1,0.5" >> "$FAKEPM_OVERRIDES"; sleep 0.1`
}

func strconvFloat(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// The shell recipe over the fake IOReport, as a CI job would run it: a
// first run on main, with no baseline yet, passes and saves one; a pull
// request that makes one command 10 % costlier in net energy (5.5 W over
// the idle 4.5 W for 0.1 s, then 6.05 W), another 1 % costlier with
// noise, and leaves a third as it was fails with status 1, and its
// comparison says which: regressed, unchanged, unchanged. The recipe is
// run as it is, with sh, and exopower from PATH.
func TestTheShellRecipeCatchesARegression(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script, err := filepath.Abs(filepath.Join(ciDir, "energy-check.sh"))
	if err != nil {
		t.Fatal(err)
	}
	check := func(save bool, costlier, little float64) (int, string) {
		t.Helper()
		args := []string{script, "baseline.json", "--source", "ioreport", "-i", "50ms", "--runs", "3", "--baseline", "0.5s",
			"-n", "costlier", burn(8.5+costlier, 0), "-n", "a little costlier", burn(8.5+little, 0.1), "-n", "same", burn(8.5, 0)}
		cmd := exec.Command("sh", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "EXOPOWER_FAKE_IOREPORT=1", "FAKEPM_PROFILE=0=3,1,0.5", "FAKEPM_OVERRIDES="+filepath.Join(dir, "overrides"),
			"SUDO_UID=", "SUDO_GID=", "ENERGY_SAVE=")
		if save {
			cmd.Env = append(cmd.Env, "ENERGY_SAVE=1")
		}
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		if err != nil && cmd.ProcessState == nil {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode(), out.String()
	}
	if code, out := check(true, 0, 0); code != 0 || !strings.Contains(out, "no baseline at baseline.json yet") {
		t.Fatalf("main's first run: status %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "baseline.json")); err != nil {
		t.Fatalf("main's run saved no baseline: %v", err)
	}
	// 10 % of the net 5.5 W is 0.55 W more; 1 %, 0.055 W.
	code, out := check(false, 0.55, 0.055)
	if code != 1 || !strings.Contains(out, "regressed  costlier (net energy)") || !strings.Contains(out, "exopower: error: 1 figure regressed") {
		t.Fatalf("the pull request: status %d, want 1\n%s", code, out)
	}
	md, err := os.ReadFile(filepath.Join(dir, "energy.md"))
	if err != nil || !strings.HasPrefix(string(md), "### exopower compare: 1 regressed, 2 unchanged") {
		t.Errorf("energy.md %q, %v", md, err)
	}
	cmd, _ := exopowerCmd(t, "compare", "--json", filepath.Join(dir, "baseline.json"), filepath.Join(dir, "energy.json"))
	raw, _ := cmd.Output()
	var rep compare.Report
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatalf("%v in %s", err, raw)
	}
	want := map[string]struct {
		verdict string
		change  float64
	}{"costlier": {compare.Regressed, 0.10}, "a little costlier": {compare.Unchanged, 0.01}, "same": {compare.Unchanged, 0}}
	for _, r := range rep.Rows {
		w := want[r.Name]
		t.Logf("%s: %s, %+.2f %% [%v, %v], p %v", r.Name, r.Verdict, 100*float64(*r.Change), *r.RatioLow, *r.RatioHigh, *r.PValue)
		// The change is exact but for the edges of the 0.1 s the fake
		// runs hotter, which the runs' timing moves by a few
		// milliseconds: 2 % of the net energy.
		if r.Verdict != w.verdict || r.Measure != "net-energy" || float64(*r.Change) < w.change-0.02 || float64(*r.Change) > w.change+0.02 {
			t.Errorf("%s: %s of %s, change %v; want %s, %v", r.Name, r.Verdict, r.Measure, *r.Change, w.verdict, w.change)
		}
	}
	if t.Failed() {
		for _, f := range []string{"baseline.json", "energy.json", "overrides"} {
			b, _ := os.ReadFile(filepath.Join(dir, f))
			t.Logf("%s:\n%s", f, b)
		}
	}
	if len(rep.Rows) != 3 || rep.New.Source.Tool != "ioreport" {
		t.Errorf("%d rows, source %+v", len(rep.Rows), rep.New.Source)
	}
}
