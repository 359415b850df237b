package main

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/exopower/exopower/internal/fakepm"
	"github.com/exopower/exopower/internal/wire"
)

// run --app Safari over the fake IOReport (GPU 8 W) and the fake Mac's
// processes: Safari and its WebContent, 3 W and 4 W of CPU and 0.8 of
// the GPU's time, over the reads from the command's start to the window
// of its end, which end there.
func TestRunAppMeasuresAnAppOverTheCommand(t *testing.T) {
	t.Parallel()
	var sum wire.Summary
	cmd, _ := exopowerCmd(t, "run", "--json", "--app", "Safari", "--source", "ioreport", "-i", "100ms", "--", "sleep", "0.5")
	cmd.Env = append(cmd.Env, "EXOPOWER_FAKE_IOREPORT=1", "FAKEPM_PROFILE="+topProfile, fakepm.ProcessesEnv+"=mac")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if err := json.Unmarshal(out, &sum); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	a := sum.App
	if a == nil {
		t.Fatalf("no app in %s", out)
	}
	d := float64(a.ReadSeconds)
	if a.Name != "Safari" || !a.Seen || a.Processes != 2 || a.ProcessesRunning != 2 || a.Reads < 5 || math.Abs(d-float64(sum.DurationSeconds)) > 0.1 {
		t.Errorf("%+v over %v s: want Safari's 2 processes, a read a window, over the command's span", *a, sum.DurationSeconds)
	}
	// The GPU's energy over the reads, every joule of it the span's,
	// 0.8 of it Safari's: to within the time by which the fake
	// IOReport's counters and the windows' timeline differ, microseconds
	// on a quiet machine, a millisecond or two under the race detector's
	// load (0.5 % of the half second).
	if gpu := 0.8 * 8 * d; math.Abs(float64(a.EnergyJoules.GPU)-gpu) > 5e-3*gpu {
		t.Errorf("GPU %.9f J, want 0.8 × 8 W × %.9f s = %.9f J", a.EnergyJoules.GPU, d, gpu)
	}
	// The CPU's as the fake's clock counted it between the first read and
	// the last, which follow the reads' windows by the time a read takes.
	within(t, "Safari's CPU energy", float64(a.EnergyJoules.CPU), 7*d, 10)
	if len(sum.Warnings) != 0 {
		t.Errorf("warnings %q", sum.Warnings)
	}
}

// --app is refused, before the command runs, over several Macs and on a
// Mac that keeps no energy per process.
func TestRunAppIsRefusedWhereItCannotMeasure(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		env  string
		why  string
	}{
		{[]string{"--node", "127.0.0.1:1"}, "mac", "--app reads this Mac's processes: not with --node"},
		{nil, "macos12", "--app: this Mac keeps no energy per process (macOS 12.7"},
	} {
		marker := t.TempDir() + "/ran"
		cmd, _ := exopowerCmd(t, append(append([]string{"run", "--app", "Safari"}, c.args...), "--", "touch", marker)...)
		cmd.Env = append(cmd.Env, fakepm.ProcessesEnv+"="+c.env)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 125 || !strings.Contains(string(out), c.why) {
			t.Errorf("%v: %v\n%s: want status 125 and %q", c.args, err, out, c.why)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Errorf("%v: the command ran", c.args)
		}
	}
}
