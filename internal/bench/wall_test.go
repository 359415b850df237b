package bench

import (
	"strings"
	"testing"

	"github.com/exopower/exopower/internal/wire"
)

// A run the plug did not answer over (coverage 0: its 0 J is no
// measurement) is left out of the wall's figures, and said to be; with
// none measured there is no wall figure at all, never a mean of zeros.
func TestRunsThePlugDidNotCoverAreLeftOut(t *testing.T) {
	run := func(j, coverage float64) Run {
		return Run{DurationSeconds: 3, Wall: &RunWall{EnergyJoules: wire.Num(j), UncertaintyJoules: 1, Method: "counter", Coverage: wire.Num(coverage)}}
	}
	r := &Result{Runs: []Run{run(90, 1), run(0, 0), run(96, 1)}, DurationSeconds: newSpread([]float64{3, 3, 3})}
	r.finishWall(nil, nil)
	if r.Wall == nil || r.Wall.EnergyJoules.Mean != 93 || r.Wall.Resolved || !strings.Contains(strings.Join(r.Warnings, "\n"), "of 1 of the 3 runs") {
		t.Errorf("wall %+v, warnings %q", r.Wall, r.Warnings)
	}
	r = &Result{Runs: []Run{run(0, 0), run(0, 0.2)}, DurationSeconds: newSpread([]float64{3, 3})}
	r.finishWall(nil, nil)
	if r.Wall != nil || !strings.Contains(strings.Join(r.Warnings, "\n"), "of 2 of the 2 runs") {
		t.Errorf("no run covered: wall %+v, warnings %q", r.Wall, r.Warnings)
	}
}
