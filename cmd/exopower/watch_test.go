package main

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exopower/exopower/internal/fakepm"
	"github.com/exopower/exopower/internal/wire"
)

// Ctrl-C ends exopower watch like --count does: the summary on stderr,
// exit status 0, powermetrics stopped.
func TestWatchEndsOnInterruptWithASummary(t *testing.T) {
	cmd, dir := exopowerCmd(t, "watch", "-i", "50ms")
	stdout, _ := cmd.StdoutPipe()
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out, errs := lines(stdout), lines(stderr)
	await(t, out, "total")
	cmd.Process.Signal(os.Interrupt)
	seen := await(t, errs, "source")
	for range out {
	}
	for range errs {
	}
	if code := exitCode(t, cmd.Wait()); code != 0 {
		t.Errorf("exit status %d, want 0; stderr:\n%s", code, strings.Join(seen, "\n"))
	}
	if all := strings.Join(seen, "\n"); !strings.Contains(all, "exopower watch") || !strings.Contains(all, "  total ") {
		t.Errorf("no summary on stderr:\n%s", all)
	}
	fakepm.AssertGone(t, filepath.Join(dir, "powermetrics.pid"))
}

// The NDJSON energies are cumulative: each line's is the last one's plus
// the line's power over its window (the first window counts only from the
// start), and the summary's is the last line's when --count ends it.
func TestWatchJSONEnergyIsCumulative(t *testing.T) {
	cmd, _ := exopowerCmd(t, "watch", "--json", "-i", "50ms", "-n", "8")
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	type line = wire.SampleLine
	var got []line
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%q: %v", sc.Text(), err)
		}
		got = append(got, l)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if len(got) != 9 || got[8].Type != "summary" {
		t.Fatalf("%d lines, the last of type %q; want 8 samples and a summary", len(got), got[len(got)-1].Type)
	}
	for i := 1; i < 8; i++ {
		step := float64(got[i].EnergyJoules.Total - got[i-1].EnergyJoules.Total)
		want := float64(got[i].PowerWatts.Total) * float64(got[i].WindowSeconds)
		if math.Abs(step-want) > 1e-6*want+1e-9 {
			t.Errorf("line %d adds %.9f J, its power over its window is %.9f J", i, step, want)
		}
	}
	if first := float64(got[0].EnergyJoules.Total); first > float64(got[0].PowerWatts.Total)*float64(got[0].WindowSeconds)*(1+1e-9) {
		t.Errorf("the first line's energy %.9f J is more than its window holds", first)
	}
	if got[8].EnergyJoules != got[7].EnergyJoules {
		t.Errorf("summary energy %+v, last sample's %+v", got[8].EnergyJoules, got[7].EnergyJoules)
	}
}
