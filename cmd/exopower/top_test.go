package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/exopower/exopower/internal/apps"
	"github.com/exopower/exopower/internal/fakepm"
)

// topProfile is the fake IOReport's SoC under top's tests: CPU 20 W,
// GPU 8 W, ANE 1 W, more than the fake Mac's processes draw.
const topProfile = "0=20,8,1"

// topOver runs exopower top over the fake IOReport and the fake Mac's
// processes (fakepm.BusyMac), and returns its stdout.
func topOver(t *testing.T, args ...string) []byte {
	t.Helper()
	cmd, _ := exopowerCmd(t, append([]string{"top", "--source", "ioreport", "-i", "200ms"}, args...)...)
	cmd.Env = append(cmd.Env, "EXOPOWER_FAKE_IOREPORT=1", "FAKEPM_PROFILE="+topProfile, fakepm.ProcessesEnv+"=mac")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("exopower top %s: %v", strings.Join(args, " "), err)
	}
	return out
}

// top --json -n 3 writes three lines, each a refresh whose apps, the
// forgotten and the rest add up to the whole Mac's power and energy (the
// fake IOReport's SMC) to the nanojoule; Safari's helper stands under
// it, another user's processes are counted and not read, and the
// hostile name is written escaped.
func TestTopJSONAddsUpToTheWholeMac(t *testing.T) {
	t.Parallel()
	sc := bufio.NewScanner(bytes.NewReader(topOver(t, "--json", "-n", "3")))
	sc.Buffer(nil, 1<<22)
	n := 0
	for sc.Scan() {
		n++
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		var l apps.Line
		if err := dec.Decode(&l); err != nil {
			t.Fatalf("line %d: %v", n, err)
		}
		if l.Type != "apps" || l.SchemaVersion != 1 || l.Scope != "system" || l.Mac.PowerWatts.System == nil {
			t.Fatalf("line %d: type %q, schema %d, scope %q, system %v", n, l.Type, l.SchemaVersion, l.Scope, l.Mac.PowerWatts.System)
		}
		var power, energy float64
		byName := map[string]apps.LineApp{}
		for _, a := range l.Apps {
			power, energy = power+float64(a.PowerWatts.Total), energy+float64(a.EnergyJoules.Total)
			byName[a.Name] = a
		}
		power += float64(l.Rest.PowerWatts.Total)
		energy += float64(l.Rest.EnergyJoules.Total + l.ForgottenEnergyJoules.Total)
		if math.Abs(power-float64(*l.Mac.PowerWatts.System)) > 1e-9 || math.Abs(energy-float64(*l.Mac.EnergyJoules.System)) > 1e-9 {
			t.Errorf("line %d: the apps and the rest make %.12f W and %.12f J, the Mac %v W and %v J", n, power, energy, *l.Mac.PowerWatts.System, *l.Mac.EnergyJoules.System)
		}
		if s := byName["Safari"]; len(s.Processes) != 2 || s.Pid == nil || *s.Pid != 600 {
			t.Errorf("line %d: Safari %+v: want its own process and its helper", n, s)
		}
		if l.Processes.NotReadable != 202 || l.CPUScale != 1 || l.Rest.PowerWatts.CPU <= 0 {
			t.Errorf("line %d: %+v, CPU scale %v, the rest's CPU %v W: want 202 of another user's not read, and the kernel's figures below the rail", n, l.Processes, l.CPUScale, l.Rest.PowerWatts.CPU)
		}
		if !strings.Contains(sc.Text(), `\\x1b]0;pwned\\x07`) || strings.Contains(sc.Text(), `\u001b`) {
			t.Errorf("line %d: the hostile name is not written escaped", n)
		}
	}
	if n != 3 {
		t.Errorf("%d lines, want 3", n)
	}
}

// Without --json and with no terminal, top --once writes one plain
// table: the rails, the apps with the most power, the rest, and what is
// not read.
func TestTopOnceWritesAPlainTable(t *testing.T) {
	t.Parallel()
	out := string(topOver(t, "--once"))
	for _, want := range []string{"the whole Mac", "APP", "Safari", "mdworker_shared", "(rest)",
		"202 processes", "not read", `\x1b]0;pwned\x07`} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	// The profile's 20 and 8 W, over a first window whose edges the fake
	// IOReport's counters and exopower's clock place a little apart on a
	// loaded machine: to a part in a thousand.
	if !regexp.MustCompile(`rails  CPU (19\.9[89]|20\.0[01]) W  GPU (7\.99\d|8\.00\d) W  ANE`).MatchString(out) {
		t.Errorf("no rails of 20 W and 8 W in\n%s", out)
	}
	if strings.Count(out, "window, ") != 1 || strings.ContainsAny(out, "\x1b\x07") {
		t.Errorf("want one refresh, and no control character:\n%q", out)
	}
}

// top and serve --apps refuse, before anything starts, a Mac that keeps
// no energy per process and flags that say two things: exit status 125
// and what to do.
func TestTopRefusesWhatItCannotDo(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		says string
	}{
		{"a Mac without energy per process", []string{fakepm.ProcessesEnv + "=macos12"}, []string{"top", "--once"}, "top: this Mac keeps no energy per process (macOS 12.7"},
		{"--once with -n 3", nil, []string{"top", "--once", "-n", "3"}, "--once and --count 3 say two things"},
		{"serve --apps on a Mac without it", []string{fakepm.ProcessesEnv + "=macos12"}, []string{"serve", "--apps", "--listen", "127.0.0.1:0"}, "--apps: this Mac keeps no energy per process"},
		{"--apps.top without --apps", nil, []string{"serve", "--apps.top", "5", "--listen", "127.0.0.1:0"}, "--apps.top and --apps.forget tune --apps, which is not given"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cmd, _ := exopowerCmd(t, tc.args...)
			cmd.Env = append(cmd.Env, tc.env...)
			out, err := cmd.CombinedOutput()
			if code := exitCode(t, err); code != 125 || !strings.Contains(string(out), tc.says) {
				t.Errorf("exit %d, %s; want 125 saying %q", code, out, tc.says)
			}
		})
	}
}
