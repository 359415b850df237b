package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/bench"
	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/compare"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/wire"
)

// madeBench is a bench report as bench writes it, of commands whose runs
// had these net energies (each run a second long, at an idle 4.5 W).
func madeBench(commands map[string][]float64, order ...string) *bench.Report {
	rep := bench.NewReport(100 * time.Millisecond)
	rep.Source = wire.Source{Tool: "powermetrics", HWModel: "MacBookPro17,1", OSBuild: "23E224"}
	se := wire.Num(0.0001)
	rep.Baseline = &bench.Baseline{PowerWatts: 4.5, StandardErrorWatts: &se, Before: &bench.Idle{Spans: 2}, After: &bench.Idle{Spans: 2}}
	for _, name := range order {
		res := bench.Result{Command: name, Parameters: map[string]string{}}
		for _, x := range commands[name] {
			net := wire.Num(x)
			res.Runs = append(res.Runs, bench.Run{DurationSeconds: 1, EnergyJoules: wire.Components{Total: net + 4.5},
				NetEnergyJoules: &net, NetEnergyUncertaintyJoules: &se, Coverage: 1})
		}
		rep.Results = append(rep.Results, res)
	}
	return rep
}

func around(m float64) []float64 { return []float64{m - 0.01, m + 0.01, m, m - 0.005, m + 0.005} }

// writeBench writes rep as --export-json would, to dir/name.
func writeBench(t *testing.T, dir, name string, rep any) string {
	t.Helper()
	var b bytes.Buffer
	if err := output.WriteJSON(&b, rep); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A regression fails compare with status 1 (unless --fail-on never); its
// JSON is compare's Report and its Markdown is written where asked.
func TestCompareExitsWithItsVerdict(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	old := writeBench(t, dir, "old.json", madeBench(map[string][]float64{"a": around(2), "b": around(1)}, "a", "b"))
	new := writeBench(t, dir, "new.json", madeBench(map[string][]float64{"a": around(2.2), "b": around(1)}, "a", "b"))
	md := filepath.Join(dir, "energy.md")
	code, out, errs := runInProcess("compare", "--export-markdown", md, old, new)
	if code != 1 || !strings.Contains(out, "regressed  a (net energy)") || !strings.Contains(errs, "exopower: error: 1 figure regressed beyond 5 % at p < 0.05: a (net energy +10.0 %)") {
		t.Errorf("status %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	if b, err := os.ReadFile(md); err != nil || !bytes.HasPrefix(b, []byte("### exopower compare: 1 regressed, 1 unchanged")) {
		t.Errorf("markdown %q, %v", b, err)
	}
	if code, _, errs := runInProcess("compare", "--fail-on", "never", old, new); code != 0 || errs != "" {
		t.Errorf("--fail-on never: status %d, stderr %q", code, errs)
	}
	code, out, _ = runInProcess("compare", "--json", "--threshold", "15%", old, new)
	var rep compare.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 || rep.Type != "compare" || rep.Regressed != 0 || float64(rep.Threshold) != 0.15 {
		t.Errorf("--json --threshold 15%%: status %d, %v, report %+v", code, err, rep)
	}
	code, out, _ = runInProcess("compare", "--export-bencher", "-", new)
	if code != 0 || !strings.Contains(out, `"net-energy": {`) {
		t.Errorf("one export to Bencher's format: status %d, %s", code, out)
	}
}

// Bad input ends compare with 125 and says what is wrong: a file cut
// short, one of another kind, a newer schema, the same file twice, both
// from stdin, one export with nothing to write, a threshold that is no
// percentage.
func TestCompareRefusesBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := writeBench(t, dir, "good.json", madeBench(map[string][]float64{"a": around(2)}, "a"))
	b, _ := os.ReadFile(good)
	cut := filepath.Join(dir, "cut.json")
	os.WriteFile(cut, b[:len(b)/3], 0o644)
	summary := filepath.Join(dir, "summary.json")
	os.WriteFile(summary, []byte(`{"schema_version":1,"type":"summary"}`), 0o644)
	newer := filepath.Join(dir, "newer.json")
	os.WriteFile(newer, bytes.Replace(b, []byte(`"schema_version":1`), []byte(`"schema_version":2`), 1), 0o644)
	link := filepath.Join(dir, "link.json")
	os.Symlink(good, link)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{cut, good}, "cut.json ends in the middle of its JSON"},
		{[]string{summary, good}, `JSON of type "summary"`},
		{[]string{newer, good}, "schema_version 2, newer than the 1 this exopower reads"},
		{[]string{good, link}, "are the same file"},
		{[]string{"-", "-"}, "OLD and NEW are both stdin"},
		{[]string{good}, "compare takes two exports, OLD and NEW, and got one"},
		{[]string{"--threshold", "five", good, good}, "not a percentage"},
		{[]string{"--fail-on", "slower", good, cut}, `--fail-on "slower"`},
		{[]string{filepath.Join(dir, "none.json"), good}, "no such file"},
	} {
		code, out, errs := runInProcess(append([]string{"compare"}, c.args...)...)
		if code != cli.StatusFailure || out != "" || !strings.Contains(errs, c.want) {
			t.Errorf("compare %q: status %d, stdout %q, stderr\n%s\nwant 125 and %q", c.args, code, out, errs, c.want)
		}
	}
}

// bench's --alpha, --threshold, --fail-on and --by-position are for
// --compare, and refused without it; a saved export that is not a
// bench's is refused before anything runs.
func TestBenchCompareFlags(t *testing.T) {
	t.Parallel()
	for _, flag := range []string{"--alpha=0.01", "--threshold=3%", "--fail-on=changed", "--by-position"} {
		code, _, errs := runInProcess("bench", flag, "true")
		if code != cli.StatusFailure || !strings.Contains(errs, "is for --compare, which is not given") {
			t.Errorf("bench %s without --compare: status %d\n%s", flag, code, errs)
		}
	}
	dir := t.TempDir()
	llm := filepath.Join(dir, "llm.json")
	os.WriteFile(llm, []byte(`{"schema_version":1,"type":"llm","results":[]}`), 0o644)
	var bc benchCompare
	bc.file = llm
	if err := bc.load(&cli.Streams{}, nil); err == nil || !strings.Contains(err.Error(), "an llm's JSON, and bench compares with a bench's") {
		t.Errorf("--compare with an llm's JSON: %v", err)
	}
}

// bench --compare's exit status: the bench's own where it failed (a
// command's status, a bench cut short) whatever the verdicts, else the
// verdicts': 1 for a regression, 0 without.
func TestBenchCompareStatusIsTheBenchsFirst(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	saved := writeBench(t, dir, "saved.json", madeBench(map[string][]float64{"a": around(2)}, "a"))
	regressed := madeBench(map[string][]float64{"a": around(2.3)}, "a")
	same := madeBench(map[string][]float64{"a": around(2.001)}, "a")
	failed := &cli.Error{Status: 2}
	for _, c := range []struct {
		name     string
		rep      *bench.Report
		benchErr error
		status   int
	}{
		{"a regression", regressed, nil, 1},
		{"no regression", same, nil, 0},
		{"a failed command and a regression", regressed, failed, 2},
		{"a failed command alone", same, failed, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out, errs bytes.Buffer
			s := &cli.Streams{Out: &out, Err: &errs, Getenv: func(string) string { return "" }}
			bc := benchCompare{file: saved, Options: compare.Defaults}
			if err := bc.load(s, nil); err != nil {
				t.Fatal(err)
			}
			err := bc.finish(s, c.rep, "basic", false, c.benchErr)
			if got := cli.Report(&errs, err); got != c.status {
				t.Errorf("status %d, want %d; stderr:\n%s", got, c.status, errs.String())
			}
			if !strings.HasPrefix(out.String(), "\nComparison 1: a (net energy)\n") || !strings.Contains(out.String(), "Summary:") {
				t.Errorf("stdout:\n%s", out.String())
			}
			var e *cli.Error
			if c.status == 1 && (!errors.As(err, &e) || !strings.Contains(err.Error(), "regressed")) {
				t.Errorf("error %v, want the regression named", err)
			}
		})
	}
}
