package main

import (
	"errors"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/exopower/exopower/internal/bench"
	"github.com/exopower/exopower/internal/fakepm"
	"github.com/exopower/exopower/internal/wire"
)

// run --attribute over the fake IOReport and a fake process table around
// the real command: the tree's figures held to the table's exact
// energies, and the rest of the Mac to the whole Mac's less them.
func TestRunAttributesTheCommandsOwnProcesses(t *testing.T) {
	var sum wire.Summary
	ioreportJSON(t, &sum, []string{fakepm.ProcessesEnv + "=busy"}, "run", "--json", "--attribute", "--source", "ioreport", "-i", "100ms", "--", "sleep", "1")
	a := sum.Attribution
	if a == nil {
		t.Fatalf("no attribution in %+v", sum)
	}
	e := a.EnergyJoules
	// Read or unseen, every joule of the tree is in one of the two: the
	// unseen CPU time is priced at the read processes' joules per CPU
	// second, which in the table are the same for all.
	within(t, "the tree's CPU energy, read and unseen", float64(e.CPU+e.UnseenCPU), fakepm.BusyTreeJoules, 0.1)
	// A, B and D at least lived across a poll; D is another user's; E
	// runs on after the command.
	if a.ProcessesRead < 4 || a.ProcessesNotReadable != 1 || a.ProcessesRunningAtEnd != 1 {
		t.Errorf("%d read, %d not readable, %d running: want 4 or 5, 1, 1", a.ProcessesRead, a.ProcessesNotReadable, a.ProcessesRunningAtEnd)
	}
	// D's 0.5 J reaches the root's count of reaped children unread.
	if e.UnseenCPU < 0.5-1e-3 || a.Coverage >= 1 {
		t.Errorf("unseen %.4f J at coverage %.4f: want D's 0.5 J at least", e.UnseenCPU, a.Coverage)
	}
	if a.Methods["cpu"] != wire.MethodMeasuredByKernel || a.Methods["unseen_cpu"] != wire.MethodEstimatedFromCPU || a.Methods["gpu"] != wire.MethodEstimatedFromGPU || a.Methods["rest_of_mac"] != wire.MethodRemainder {
		t.Errorf("methods %v", a.Methods)
	}
	// The GPU: the tree's 0.15 s against the browser's 0.25 s/s over
	// the polls, which run within the span.
	d := float64(sum.DurationSeconds)
	tree := fakepm.BusyTreeGPU.Seconds()
	lo, hi := tree/(tree+fakepm.BusyTreeBrowserGPU*d), tree/(tree+fakepm.BusyTreeBrowserGPU*(d-0.3))
	if a.GPUShare == nil || float64(*a.GPUShare) < lo || float64(*a.GPUShare) > hi {
		t.Fatalf("GPU share %v, want within [%.4f, %.4f]", a.GPUShare, lo, hi)
	}
	if e.GPU == nil || math.Abs(float64(*e.GPU)-float64(*a.GPUShare*sum.EnergyJoules.GPU)) > 1e-9 || e.ANE != nil {
		t.Errorf("GPU %v J, ANE %v J: want the share times the GPU's %v J, and no ANE", e.GPU, e.ANE, sum.EnergyJoules.GPU)
	}
	if math.Abs(float64(e.Command-(e.CPU+e.UnseenCPU+*e.GPU))) > 1e-9 || a.RestOf != "system" || math.Abs(float64(e.RestOfMac-(*sum.EnergyJoules.System-e.Command))) > 1e-9 {
		t.Errorf("command %v J, rest of the %s %v J: want the sum, and the system's %v J less it", e.Command, a.RestOf, e.RestOfMac, *sum.EnergyJoules.System)
	}
	// exopower and the command share the coalition of the test, which
	// holds more: no coalition figure, and why.
	if a.CoalitionNote == "" {
		t.Error("no word on the coalition")
	}
}

// The text summary says what each figure is.
func TestRunAttributeSaysWhatEachFigureIs(t *testing.T) {
	cmd, _ := exopowerCmd(t, "run", "--attribute", "--source", "ioreport", "-i", "100ms", "--", "sleep", "0.8")
	cmd.Env = append(cmd.Env, "EXOPOWER_FAKE_IOREPORT=1", "FAKEPM_PROFILE="+ioProfile, fakepm.ProcessesEnv+"=busy")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"the command's own processes:", "more of another user's, which it may not read", "still running at the end",
		"CPU", "measured by the kernel", "unseen CPU", "estimated from CPU time", "GPU", "estimated from the share of GPU time",
		"command", "rest of Mac", "the remainder: the whole Mac's (system) energy less the command's"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}

// A Mac that keeps no energy per process is told so before the command
// runs: it does not run.
func TestRunAttributeOnAMacWithoutProcessEnergyRunsNothing(t *testing.T) {
	marker := t.TempDir() + "/ran"
	cmd, _ := exopowerCmd(t, "run", "--attribute", "--source", "ioreport", "--", "touch", marker)
	cmd.Env = append(cmd.Env, "EXOPOWER_FAKE_IOREPORT=1", fakepm.ProcessesEnv+"=macos12")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 125 || !strings.Contains(string(out), "macOS 13 or later") || !strings.Contains(string(out), "without --attribute") {
		t.Errorf("%v\n%s: want status 125, why and what to do", err, out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the command ran")
	}
}

// bench --attribute gives each run its own processes' energy, and each
// command the statistics of it.
func TestBenchAttributesEachRunsOwnProcesses(t *testing.T) {
	var rep bench.Report
	ioreportJSON(t, &rep, []string{fakepm.ProcessesEnv + "=busy"}, "bench", "--json", "--attribute", "--source", "ioreport", "--runs", "2", "--baseline", "0", "-N", "sleep 0.9")
	r := rep.Results[0]
	if len(r.Runs) != 2 || r.CommandEnergyJoules == nil {
		t.Fatalf("%d runs, own energy %v", len(r.Runs), r.CommandEnergyJoules)
	}
	var own []float64
	for i, run := range r.Runs {
		a := run.Attribution
		if a == nil {
			t.Fatalf("run %d: no attribution (%v)", i, run.Warnings)
		}
		within(t, "a run's CPU energy, read and unseen", float64(a.EnergyJoules.CPU+a.EnergyJoules.UnseenCPU), fakepm.BusyTreeJoules, 0.1)
		own = append(own, float64(a.EnergyJoules.Command))
	}
	if mean := (own[0] + own[1]) / 2; math.Abs(float64(r.CommandEnergyJoules.Mean)-mean) > 1e-9 {
		t.Errorf("own energy's mean %v, want the runs' %v", r.CommandEnergyJoules.Mean, mean)
	}
}

// --attribute reads this Mac's processes: not with --node.
func TestAttributeIsRefusedWithNodes(t *testing.T) {
	for _, args := range [][]string{{"run", "--attribute", "--node", "127.0.0.1:1", "--", "true"}, {"bench", "--attribute", "--node", "127.0.0.1:1", "true"}} {
		cmd, _ := exopowerCmd(t, args...)
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "--attribute reads this Mac's processes: not with --node") {
			t.Errorf("%v: %v\n%s", args, err, out)
		}
	}
}
