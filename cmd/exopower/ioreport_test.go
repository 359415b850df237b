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

	"github.com/exopower/exopower/internal/bench"
	"github.com/exopower/exopower/internal/fakepm"
	"github.com/exopower/exopower/internal/wire"
)

// The profile of these tests: steps that a wrong placement of windows
// would show, beside the fake system's smooth power and its DRAM's.
const ioProfile = "period=0.7 0=9,3,1 0.35=2,0.5,0"

// ioreportJSON runs exopower with --source ioreport over the fake IOReport
// and decodes what it writes to stdout into v.
func ioreportJSON(t *testing.T, v any, env []string, args ...string) {
	t.Helper()
	cmd, _ := exopowerCmd(t, args...)
	cmd.Env = append(cmd.Env, append([]string{"EXOPOWER_FAKE_IOREPORT=1", "FAKEPM_PROFILE=" + ioProfile}, env...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("exopower %s: %v", strings.Join(args, " "), err)
	}
	if err := json.Unmarshal(out, v); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
}

// truthOf is the exact energy of the fake over [from, to]: the SoC's from
// the profile, DRAM's constant power, and the system's smooth curve.
func truthOf(t *testing.T, from, to time.Time) (soc, dram, system float64) {
	prof, err := fakepm.ParseProfile(ioProfile)
	if err != nil {
		t.Fatal(err)
	}
	return prof.Energy(from, to).Total(), fakepm.DRAMWatts * to.Sub(from).Seconds(), fakepm.SystemEnergy(from, to)
}

// holdIO holds a summary's SoC, DRAM and system energy to the fake's
// exact integral over its span, within percent.
func holdIO(t *testing.T, what string, sum *wire.Summary, percent float64) {
	t.Helper()
	from, to := spanOf(t, sum.StartedAt, float64(sum.DurationSeconds))
	soc, dram, system := truthOf(t, from, to)
	e := sum.EnergyJoules
	if e.DRAM == nil || e.System == nil || sum.Source.Tool != "ioreport" {
		t.Fatalf("%s: dram %v, system %v, source %+v: want both, from ioreport", what, e.DRAM, e.System, sum.Source)
	}
	within(t, what+": SoC energy", float64(e.Total), soc, percent)
	within(t, what+": DRAM energy", float64(*e.DRAM), dram, percent)
	within(t, what+": system energy", float64(*e.System), system, percent)
}

// run --source ioreport reads IOReport's counters and the SMC without
// powermetrics: the SoC's, the memory's and the whole system's energy of
// the command, each within 0.5 % of the exact integral.
func TestIOReportRunIsTheExactEnergy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var sum wire.Summary
	ioreportJSON(t, &sum, nil, "run", "--json", "--source", "ioreport", "--", "span", filepath.Join(dir, "span"), "1.3")
	holdIO(t, "run", &sum, 0.5)
	if len(sum.Warnings) != 0 || sum.Coverage != 1 {
		t.Errorf("warnings %q, coverage %v", sum.Warnings, sum.Coverage)
	}
}

// watch --source ioreport --json: each line has the memory's and the
// system's power, and the summary their energy.
func TestIOReportWatchLines(t *testing.T) {
	t.Parallel()
	cmd, _ := exopowerCmd(t, "watch", "--json", "--source", "ioreport", "-i", "100ms", "-n", "6")
	cmd.Env = append(cmd.Env, "EXOPOWER_FAKE_IOREPORT=1", "FAKEPM_PROFILE="+ioProfile)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	ls := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(ls) != 7 {
		t.Fatalf("%d lines, want 6 and the summary:\n%s", len(ls), out)
	}
	for _, l := range ls[:6] {
		var sl wire.SampleLine
		if json.Unmarshal([]byte(l), &sl) != nil || sl.PowerWatts.System == nil || sl.PowerWatts.DRAM == nil || sl.EnergyJoules.System == nil {
			t.Errorf("line %s: want the system's and the memory's power and energy", l)
		}
	}
	var sum wire.Summary
	if err := json.Unmarshal([]byte(ls[6]), &sum); err != nil {
		t.Fatal(err)
	}
	holdIO(t, "watch", &sum, 0.5)
}

// serve --source ioreport: a span over HTTP is the exact energy, and the
// system's energy is a counter of its own.
func TestIOReportServe(t *testing.T) {
	t.Parallel()
	s := startServe(t, ioProfile, []string{"EXOPOWER_FAKE_IOREPORT=1"}, "--source", "ioreport", "-i", "100ms")
	var o wire.Opened
	if code := do(t, http.MethodPost, s.url+"/v1/spans", &o); code != http.StatusCreated {
		t.Fatalf("POST /v1/spans: %d", code)
	}
	time.Sleep(1200 * time.Millisecond) // the span's length, not a wait for something
	var end wire.Reading
	if code := do(t, http.MethodPost, s.url+o.URL+"/end", &end); code != http.StatusOK {
		t.Fatalf("end: %d", code)
	}
	holdIO(t, "serve's span", end.Summary, 0.5)
	m := scrapeMetrics(t, s.url)
	if m["exopower_system_energy_joules_total"] <= 0 || m["exopower_dram_energy_joules_total"] <= 0 || m[`exopower_source_info{hw_model="Mac14,14",os_build="24F74",tool="ioreport"}`] != 1 {
		t.Errorf("metrics: system %v, dram %v, source %v", m["exopower_system_energy_joules_total"], m["exopower_dram_energy_joules_total"],
			m[`exopower_source_info{hw_model="Mac14,14",os_build="24F74",tool="ioreport"}`])
	}
	// The memory is beside the SoC, not a part of it: sum() over the
	// components' counter stays the SoC's.
	parts := 0.0
	for k, v := range m {
		if strings.HasPrefix(k, "exopower_energy_joules_total{") {
			parts += v
		}
	}
	if soc := m["exopower_soc_energy_joules_total"]; math.Abs(parts-soc) > 1e-6*soc {
		t.Errorf("the components' counters sum to %v J, the SoC's is %v J", parts, soc)
	}
}

// bench --source ioreport: each run has the system's energy, and each
// command its spread and its net against the idle system's power.
func TestIOReportBench(t *testing.T) {
	t.Parallel()
	var rep bench.Report
	ioreportJSON(t, &rep, nil, "bench", "--json", "--source", "ioreport", "-r", "2", "--baseline", "1s", "sleep 0.4")
	r := rep.Results[0]
	if rep.Source.Tool != "ioreport" || rep.Baseline == nil || rep.Baseline.SystemPowerWatts == nil || r.SystemEnergyJoules == nil || r.NetSystemEnergyJoules == nil {
		t.Fatalf("report: source %+v, baseline %+v, system %+v", rep.Source, rep.Baseline, r.SystemEnergyJoules)
	}
	for _, run := range r.Runs {
		from, to := spanOf(t, run.StartedAt, float64(run.DurationSeconds))
		_, _, system := truthOf(t, from, to)
		within(t, "a run's system energy", float64(*run.EnergyJoules.System), system, 0.5)
	}
}

// run --node local --source ioreport beside a serve that reads IOReport:
// the cluster's system energy is the nodes' sum.
func TestIOReportRunOverNodes(t *testing.T) {
	t.Parallel()
	node := elsewhere(t, startServe(t, ioProfile, []string{"EXOPOWER_FAKE_IOREPORT=1"}, "--source", "ioreport", "-i", "100ms", "--node-name", "remote"))
	var sum wire.Summary
	ioreportJSON(t, &sum, nil, "run", "--json", "--source", "ioreport", "--node", node.url, "--node", "local", "--", "sleep", "1")
	if len(sum.Nodes) != 2 || sum.EnergyJoules.System == nil {
		t.Fatalf("nodes %d, system %v", len(sum.Nodes), sum.EnergyJoules.System)
	}
	var total float64
	for _, n := range sum.Nodes {
		holdIO(t, "node "+n.Node, n.Summary, 0.5)
		total += float64(*n.EnergyJoules.System)
	}
	if got := float64(*sum.EnergyJoules.System); math.Abs(got-total) > 1e-9*total {
		t.Errorf("the cluster's system energy %v J, the nodes' sum %v J", got, total)
	}
}

// record writes each reading to the file as it reads it: a record killed
// (kill -9, no chance to clean up) leaves the file it was told to write,
// whole to its last line, which report reads; and nothing else beside it.
func TestAKilledRecordLeavesItsReadings(t *testing.T) {
	t.Parallel()
	cmd, dir := exopowerCmd(t, "record", "-i", "20ms", "-o", "live.ndjson")
	cmd.Env = append(cmd.Env, "EXOPOWER_FAKE_IOREPORT=1", "FAKEPM_PROFILE="+ioProfile)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "live.ndjson")
	// Until the file holds the header and five readings (a guard
	// against a hang, not a bound on speed).
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if b, _ := os.ReadFile(path); strings.Count(string(b), "\n") >= 6 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal("no five readings in live.ndjson after a minute")
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() != "live.ndjson" && e.Name() != "powermetrics.pid" {
			t.Errorf("left beside the recording: %s", e.Name())
		}
	}
	var sum wire.Summary
	ioreportJSON(t, &sum, nil, "report", "--json", path)
	if sum.Samples < 4 || sum.Source.Tool != "ioreport" || sum.EnergyJoules.System == nil {
		t.Errorf("report of the killed recording: %d samples, source %q", sum.Samples, sum.Source.Tool)
	}
}
