package main

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/fakellm"
	"github.com/exopower/exopower/internal/fakeplug"
	"github.com/exopower/exopower/internal/llm"
	"github.com/exopower/exopower/internal/output"
)

// A setting's run at the wall is the plug's energy over the run's span,
// within its uncertainty of the exact integral of the plug's square
// wave, over its output tokens; the idle power at the wall comes from
// the baseline's spans and the net is the run's less it. The text leads
// with the wall, and the exports have it.
func TestLLMMeasuresTheRunAtTheWall(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, url, cfg := modelServer(t, dir, func(cfg *fakellm.Config) {
		cfg.Period, cfg.Prefill, cfg.Decode = 300*time.Millisecond, 50*time.Millisecond, 150*time.Millisecond
	})
	f, plugURL := plug(t, fakeplug.ShellyGen1, func(c *fakeplug.Config) { c.Profile = fakeplug.Constant(30) })
	csv, svg := dir+"/set.csv", dir+"/llm.svg"
	rep, stderr, code := llmJSON(t, cfg.Overrides, nil, "-r", "4", "-w", "0", "--baseline", "300ms", "--wall", plugURL, "--export-csv", csv, "--plot", svg, url)
	if code != 0 || rep == nil || len(rep.Results) != 1 || rep.Results[0].Run == nil {
		t.Fatalf("status %d, stderr %s", code, stderr)
	}
	run := rep.Results[0].Run
	w, rw := run.Summary.Wall, run.Wall
	if w == nil || rw == nil || rep.Baseline == nil || rep.Baseline.Wall == nil {
		t.Fatalf("no wall: %+v, %+v, baseline %+v", w, rw, rep.Baseline)
	}
	from, to := spanOf(t, run.Summary.StartedAt, float64(run.Summary.DurationSeconds))
	truth := f.Energy(from, to)
	withinJoules(t, "the run at the wall", float64(w.EnergyJoules), truth, float64(w.UncertaintyJoules)+0.01*truth)
	if w.Source.Kind != string(fakeplug.ShellyGen1) || run.CompletionTokens == 0 || rw.JoulesPerOutputToken == nil || rw.NetJoulesPerOutputToken == nil {
		t.Fatalf("wall %+v, %+v", w, rw)
	}
	n := float64(run.CompletionTokens)
	withinJoules(t, "J per output token at the wall", float64(*rw.JoulesPerOutputToken), truth/n, float64(w.UncertaintyJoules)/n+0.01*truth/n)
	withinJoules(t, "the idle power at the wall", float64(rep.Baseline.Wall.PowerWatts), 30, 0.3)
	withinJoules(t, "the net energy at the wall", float64(*rw.NetEnergyJoules), 0, 0.02*truth)
	var text strings.Builder
	llm.WriteText(&text, rep, &output.Styles{Plain: true})
	if _, block, _ := strings.Cut(text.String(), "Benchmark 1: "); !strings.HasPrefix(block[strings.Index(block, "\n")+1:], "  At the wall:") {
		t.Errorf("the text does not lead with the wall:\n%s", text.String())
	}
	head, row, _ := strings.Cut(readFile(t, csv), "\n")
	if !strings.Contains(head, ",wall_energy_joules,") || !strings.Contains(row, ",power,") && !strings.Contains(row, ",counter,") {
		t.Errorf("the CSV has no wall:\n%s\n%s", head, row)
	}
	checkLLMPictureAtTheWall(t, readFile(t, svg))
}

// checkLLMPictureAtTheWall holds llm --plot's picture of a plug at a
// constant power to it: a dashed line in the wall's grey, level (each
// step the plug's power over it), and the title's J per token there.
func checkLLMPictureAtTheWall(t *testing.T, svg string) {
	t.Helper()
	paths := regexp.MustCompile(`<path d="([^"]*)"\s+style="[^"]*stroke:#555555[^"]*stroke-dasharray`).FindAllStringSubmatch(svg, -1)
	if len(paths) != 2 || !strings.Contains(svg, " mJ at the wall") && !strings.Contains(svg, " J at the wall") {
		t.Fatalf("%d dashed paths in the wall's grey (want the plug's line and the legend's), or no J per token at the wall in the title", len(paths))
	}
	points := regexp.MustCompile(`[ML][0-9.-]+,([0-9.-]+)`).FindAllStringSubmatch(paths[0][1], -1)
	for _, p := range points {
		if p[1] != points[0][1] {
			t.Errorf("the plug at 30 W is not a level line: %s", paths[0][1])
			break
		}
	}
	if len(points) < 4 {
		t.Errorf("the plug's line has %d points, want two a reading, of two readings or more", len(points))
	}
}

// --wall with --node is refused, and a plug that cannot be read stops
// llm before any request is sent.
func TestLLMRefusesAWallItCannotRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv, url, cfg := modelServer(t, dir, nil)
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no plug there", []string{"--wall", "shelly://127.0.0.1:1"}, "reachable"},
		{"with --node", []string{"--wall", "shelly://127.0.0.1:1", "--node", "http://127.0.0.1:1"}, "not with --node"},
	} {
		rep, stderr, code := llmJSON(t, cfg.Overrides, nil, append(c.args, "-r", "1", "-w", "0", "--baseline", "0", url)...)
		if code != 125 || rep != nil || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: status %d, stderr %s", c.name, code, stderr)
		}
	}
	for _, q := range srv.Requests() {
		if strings.Contains(q.Path, "completions") {
			t.Errorf("a request sent past a plug that could not be read: %+v", q)
		}
	}
}
