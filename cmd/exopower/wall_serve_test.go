package main

import (
	"encoding/json"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/fakeplug"
	"github.com/exopower/exopower/internal/wire"
)

// holdWall fails the test unless w is within its uncertainty (and 1 %
// for the placing of the plug's readings by two processes' clocks) of
// the plug's exact energy over [from, to].
func holdWall(t *testing.T, what string, w *wire.Wall, f *fakeplug.Fake, from, to time.Time) {
	t.Helper()
	if w == nil {
		t.Fatalf("%s: no wall", what)
	}
	truth := f.Energy(from, to)
	t.Logf("%s: %.2f J ± %.2f J by its %s, true %.2f J", what, float64(w.EnergyJoules), float64(w.UncertaintyJoules), w.Method, truth)
	if diff := math.Abs(float64(w.EnergyJoules) - truth); diff > float64(w.UncertaintyJoules)+0.01*truth || w.Coverage < 0.99 {
		t.Errorf("%s: %.2f J (coverage %v), true %.2f J: off by %.2f J, beyond its uncertainty of %.2f J", what, float64(w.EnergyJoules), float64(w.Coverage), truth, diff, float64(w.UncertaintyJoules))
	}
}

// serve --wall reads its plug for as long as it runs: its counters and
// status, a span's wall figure within its uncertainty of the plug's
// exact energy, and the wall in the line it ends with.
func TestServeReadsItsPlug(t *testing.T) {
	t.Parallel()
	f, url := plug(t, fakeplug.ShellyGen2, nil)
	s := startServe(t, stepped, nil, "-i", "100ms", "--wall", url)
	s.waitStatus(t, "two readings of the plug", func(st wire.Status) bool { return st.Wall != nil && st.Wall.Polls-st.Wall.PollFailures >= 2 })
	var o wire.Opened
	if code := do(t, http.MethodPost, s.url+"/v1/spans", &o); code != http.StatusCreated {
		t.Fatalf("POST /v1/spans: %d", code)
	}
	time.Sleep(1500 * time.Millisecond)
	var end wire.Reading
	if code := do(t, http.MethodPost, s.url+o.URL+"/end", &end); code != http.StatusOK || end.EndedAt == nil {
		t.Fatalf("end: %d %+v", code, end)
	}
	holdWall(t, "the span", end.Wall, f, mustTime(t, o.StartedAt), mustTime(t, *end.EndedAt))
	if len(end.Warnings) != 0 || end.Wall.Source.Kind != "shelly-gen2" {
		t.Errorf("span's warnings %q, wall %+v", end.Warnings, end.Wall)
	}
	st := s.status(t)
	m := scrapeMetrics(t, s.url)
	info := `exopower_wall_info{address="` + url + `",firmware="1.1.0",kind="shelly-gen2",model="SNPL-00112EU"}`
	// The counter only grows: a scrape after the status reads no less
	// (the status's numbers are rounded to 12 digits).
	if m[info] != 1 || m["exopower_wall_counter_resolution_joules"] != 3.6 || m["exopower_wall_energy_joules_total"] < float64(st.Wall.EnergyJoules)*(1-1e-11) ||
		st.Wall.EnergyJoules < end.Wall.EnergyJoules-2*3.6 || st.Wall.PollFailures != 0 || st.Wall.LastError != nil {
		t.Errorf("metrics %v; status's wall %+v", m, st.Wall)
	}
	if p := m["exopower_wall_power_watts"]; p != 20 && p != 80 {
		t.Errorf("exopower_wall_power_watts = %v, want one of the plug's 20 W and 80 W", p)
	}
	s.stop(t)
	if last := s.stderr[len(s.stderr)-1]; !strings.Contains(last, " (wall), ") {
		t.Errorf("serve's last line does not give the wall's energy: %s", last)
	}
}

// --node sums the walls that each node's serve reads: two Macs on two
// plugs are their sum (two Macs behind one plug, counted once, are
// internal/cluster's TestTheTotalHasNoWallWhereANodeReadsNoPlug's).
func TestNodesSumTheirPlugsEachOnce(t *testing.T) {
	t.Parallel()
	f1, url1 := plug(t, fakeplug.ShellyGen2, func(c *fakeplug.Config) { c.Profile = fakeplug.Constant(30) })
	f2, url2 := plug(t, fakeplug.Tasmota, func(c *fakeplug.Config) { c.Profile = fakeplug.Constant(50) })
	a := startServe(t, stepped, nil, "-i", "100ms", "--node-name", "a", "--wall", url1)
	b := startServe(t, stepped, nil, "-i", "100ms", "--node-name", "b", "--wall", url2)
	sum, code := runNodes(t, []*served{a, b}, "sleep", "1")
	if code != 0 || len(sum.Nodes) != 2 || sum.Wall == nil {
		t.Fatalf("status %d, summary %+v", code, sum)
	}
	for i, f := range []*fakeplug.Fake{f1, f2} {
		n := sum.Nodes[i]
		holdWall(t, "node "+n.Node, n.Wall, f, mustTime(t, n.StartedAt), mustTime(t, n.EndedAt))
	}
	// The JSON's numbers are rounded to 12 digits.
	if w, n := sum.Wall, sum.Nodes; math.Abs(float64(w.EnergyJoules-n[0].Wall.EnergyJoules-n[1].Wall.EnergyJoules)) > 1e-9 || w.Source.Kind != "shelly-gen2+tasmota" || w.Method != "power" ||
		math.Abs(float64(w.AvgPowerWatts)-float64(w.EnergyJoules)/float64(sum.DurationSeconds)) > 1e-9 {
		t.Errorf("the total's wall %+v, not the nodes' sum %v + %v", w, n[0].Wall.EnergyJoules, n[1].Wall.EnergyJoules)
	}
}

// watch --wall: each line holds the plug's power now and its energy so
// far, which only grows; the summary's wall is the span's, within its
// uncertainty of the plug's exact energy; plot draws it. (The lines for
// people are internal/output's TestTheLinesLeadWithTheWall's.)
func TestWatchShowsTheWall(t *testing.T) {
	t.Parallel()
	f, url := plug(t, fakeplug.ShellyGen2, nil)
	cmd, _ := exopowerCmd(t, "watch", "--json", "-i", "100ms", "-d", "1500ms", "--wall", url)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	rows := strings.Split(strings.TrimSpace(string(out)), "\n")
	var prev float64
	for i, raw := range rows[:len(rows)-1] {
		var l wire.SampleLine
		if err := json.Unmarshal([]byte(raw), &l); err != nil || l.Wall == nil {
			t.Fatalf("line %d %s: %v, no wall", i, raw, err)
		}
		if p := l.Wall.PowerWatts; p == nil || (*p != 20 && *p != 80) || float64(l.Wall.EnergyJoules) < prev {
			t.Errorf("line %d's wall %+v after %.3f J: want the plug's 20 W or 80 W, and energy that only grows", i, l.Wall, prev)
		}
		prev = float64(l.Wall.EnergyJoules)
	}
	if prev < 20 {
		t.Errorf("1.5 s at 20 to 80 W gave %.3f J so far", prev)
	}
	var sum wire.Summary
	if err := json.Unmarshal([]byte(rows[len(rows)-1]), &sum); err != nil {
		t.Fatal(err)
	}
	started := mustTime(t, sum.StartedAt)
	holdWall(t, "watch", sum.Wall, f, started, started.Add(time.Duration(float64(sum.DurationSeconds)*1e9)))
	// plot draws the wall from those lines, and its title leads with it.
	lines := filepath.Join(t.TempDir(), "w.ndjson")
	os.WriteFile(lines, out, 0o644)
	cmd, _ = exopowerCmd(t, "plot", lines, "-o", lines+".svg")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("plot: %v: %s", err, msg)
	}
	if svg, _ := os.ReadFile(lines + ".svg"); !strings.Contains(string(svg), ">wall<") || !strings.Contains(string(svg), ">wall ") {
		t.Errorf("the plot of watch --wall draws no wall")
	}

}

// record --wall writes the plug's readings beside IOReport's, and
// report measures the wall from them as a live run would: within its
// uncertainty of the plug's exact energy over the report's span.
func TestRecordKeepsThePlugsReadingsForReport(t *testing.T) {
	t.Parallel()
	f, url := plug(t, fakeplug.ShellyGen2, nil)
	cmd, dir := exopowerCmd(t, "record", "-i", "100ms", "-d", "1500ms", "-o", "rec.ndjson", "--wall", url)
	cmd.Env = append(cmd.Env, "EXOPOWER_FAKE_IOREPORT=1", "FAKEPM_PROFILE="+ioProfile)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	path := filepath.Join(dir, "rec.ndjson")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(string(b), "\n"); !strings.Contains(first, `"schema_version":2`) || !strings.Contains(first, `"wall":{"kind":"shelly-gen2"`) ||
		strings.Count(string(b), `{"type":"wall",`) < 3 {
		t.Fatalf("the recording holds no plug: %.600s", b)
	}
	var sum wire.Summary
	ioreportJSON(t, &sum, nil, "report", "--json", path)
	started := mustTime(t, sum.StartedAt)
	holdWall(t, "report", sum.Wall, f, started, started.Add(time.Duration(float64(sum.DurationSeconds)*1e9)))
}
