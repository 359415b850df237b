package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/exopower/exopower/internal/bench"
	"github.com/exopower/exopower/internal/fakeplug"
	"github.com/exopower/exopower/internal/plot"
)

// benchWall runs exopower bench --wall url with args in the text's
// style basic, its report exported to a file, and returns the report,
// the text, its stderr and status.
func benchWall(t *testing.T, url string, args ...string) (*bench.Report, string, string, int) {
	t.Helper()
	cmd, dir := exopowerCmd(t, append([]string{"bench", "--style", "basic", "--wall", url, "--export-json", "report.json"}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	code := exitCode(t, err)
	b, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		return nil, string(out), stderr.String(), code
	}
	var rep bench.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("%v in %s", err, b)
	}
	return &rep, string(out), stderr.String(), code
}

// Each run's energy at the wall is the plug's over the run's own span,
// within its uncertainty of the exact integral of the plug's square
// wave; the runs, a fifth of a second each, are shorter than a plug
// resolves, and the report says so rather than give their figure as
// the command's. The text leads with the wall, and the exports have it.
func TestBenchMeasuresEachRunAtTheWall(t *testing.T) {
	t.Parallel()
	f, url := plug(t, fakeplug.ShellyGen2, nil)
	rep, text, stderr, code := benchWall(t, url, "-r", "3", "--baseline", "0", "--units", "4", "--export-csv", "-", "sleep 0.2")
	if code != 0 || rep == nil || len(rep.Results) != 1 || len(rep.Results[0].Runs) != 3 {
		t.Fatalf("status %d, stderr %s", code, stderr)
	}
	if rep.Wall == nil || rep.Wall.Source.Kind != string(fakeplug.ShellyGen2) || rep.Wall.Source.Address != url {
		t.Errorf("the report's wall %+v", rep.Wall)
	}
	r := rep.Results[0]
	var sum float64
	for _, run := range r.Runs {
		w := run.Wall
		if w == nil {
			t.Fatalf("a run without its wall: %+v", run)
		}
		from, to := spanOf(t, run.StartedAt, float64(run.DurationSeconds))
		truth := f.Energy(from, to)
		withinJoules(t, "a run at the wall", float64(w.EnergyJoules), truth, float64(w.UncertaintyJoules)+0.01*truth)
		if w.Method != "power" || w.Coverage < 0.99 || w.NetEnergyJoules != nil {
			t.Errorf("run at the wall %+v: want its power readings, all of it covered, no net without a baseline", w)
		}
		sum += float64(w.EnergyJoules)
	}
	w := r.Wall
	if w == nil || w.Resolved || w.Method != "power" || w.EnergyPerUnitJoules == nil {
		t.Fatalf("the command at the wall %+v: want it measured and said to be unresolved", w)
	}
	withinJoules(t, "the mean at the wall", float64(w.EnergyJoules.Mean), sum/3, 1e-9)
	withinJoules(t, "per unit at the wall", float64(w.EnergyPerUnitJoules.Mean), sum/3/4, 1e-9)
	if !strings.Contains(stderr, "sleep 0.2: at the wall, runs of") || !strings.Contains(stderr, "shorter than two of a plug's refreshes") {
		t.Errorf("no warning that the plug cannot resolve the runs: %s", stderr)
	}
	block, _, _ := strings.Cut(text, "Energy (mean")
	if !strings.HasPrefix(block, "Benchmark 1: sleep 0.2\n  Wall energy (mean ± σ):") || !strings.Contains(block, "by the plug's power readings; not resolved") {
		t.Errorf("the text does not lead with the wall:\n%s", text)
	}
	if !strings.Contains(text, "At the wall: SNPL-00112EU (shelly-gen2) at "+url) {
		t.Errorf("the text does not name the plug:\n%s", text)
	}
	csvHead, csvRow, _ := strings.Cut(text[strings.Index(text, "command,mean"):], "\n")
	// The plug's columns, then the estimate's, empty with a plug.
	if !strings.HasSuffix(csvHead, ",wall_method,"+strings.Join(slices.Concat(estimatedCSVColumns, costCSVColumns), ",")) ||
		!strings.HasSuffix(strings.TrimSpace(csvRow), ",power"+strings.Repeat(",", len(estimatedCSVColumns)+len(costCSVColumns))) {
		t.Errorf("the CSV has no wall:\n%s\n%s", csvHead, csvRow)
	}
}

// The idle power at the wall comes from the baseline's pieces, and each
// run's net energy there is its energy less that power over its span:
// at a constant 30 W, 30 W and nothing.
func TestBenchNetEnergyAtTheWall(t *testing.T) {
	t.Parallel()
	f, url := plug(t, fakeplug.Tasmota, func(c *fakeplug.Config) { c.Profile = fakeplug.Constant(30) })
	rep, _, stderr, code := benchWall(t, url, "-r", "2", "--baseline", "500ms", "sleep 0.2")
	if code != 0 || rep == nil || rep.Baseline == nil || rep.Baseline.Wall == nil || len(rep.Results[0].Runs) != 2 {
		t.Fatalf("status %d, stderr %s, report %+v", code, stderr, rep)
	}
	withinJoules(t, "the idle power at the wall", float64(rep.Baseline.Wall.PowerWatts), 30, 0.3)
	for _, run := range rep.Results[0].Runs {
		from, to := spanOf(t, run.StartedAt, float64(run.DurationSeconds))
		truth := f.Energy(from, to)
		if run.Wall == nil || run.Wall.NetEnergyJoules == nil {
			t.Fatalf("run at the wall %+v: want its net energy", run.Wall)
		}
		withinJoules(t, "a run at the wall", float64(run.Wall.EnergyJoules), truth, 0.01*truth)
		withinJoules(t, "its net energy at the wall", float64(*run.Wall.NetEnergyJoules), 0, 0.02*truth)
	}
	if w := rep.Results[0].Wall; w == nil || w.NetEnergyJoules == nil || w.NetEnergyUncertaintyJoules == nil {
		t.Errorf("the command at the wall %+v: want its net energy and its uncertainty", w)
	}
	// Its picture, as exopower plot draws the export: the runs at the
	// wall, a grey square each (and the legend's), beside the Mac's, the
	// idle band at the wall behind them, and the mean there in the title.
	export, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	chart, err := plot.Read(bytes.NewReader(export), "b.json")
	if err != nil {
		t.Fatal(err)
	}
	var svg strings.Builder
	if err := chart(&svg, plot.SVG, plot.DefaultSize); err != nil {
		t.Fatal(err)
	}
	squares := regexp.MustCompile(`<path d="M[^"]*Z"\s+style="fill:#555555"`).FindAllString(svg.String(), -1)
	if len(squares) != 2+1 || !strings.Contains(svg.String(), "fill:#E4E4E4") || !strings.Contains(svg.String(), " J at the wall)") ||
		!strings.Contains(svg.String(), "energy at the wall<") {
		t.Errorf("the picture of the bench has %d squares at the wall (want 3), or no idle band there, or no mean there in its title or legend", len(squares))
	}
}

// A plug that cannot be read stops the bench before any command runs,
// as it stops exopower run; --wall with --node is refused.
func TestBenchRefusesAWallItCannotRead(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no plug there", []string{"--wall", "shelly://127.0.0.1:1"}, "reachable"},
		{"with --node", []string{"--wall", "shelly://127.0.0.1:1", "--node", "http://127.0.0.1:1"}, "not with --node"},
	} {
		cmd, dir := exopowerCmd(t, append(append([]string{"bench", "--json", "-r", "1"}, c.args...), "touch ran")...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		code := exitCode(t, err)
		_, ran := os.Stat(filepath.Join(dir, "ran"))
		if code != 125 || len(out) != 0 || ran == nil || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%s: status %d, ran %v, stdout %s, stderr %s", c.name, code, ran == nil, out, stderr.String())
		}
	}
}
