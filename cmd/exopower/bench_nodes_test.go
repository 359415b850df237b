package main

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"github.com/exopower/exopower/internal/bench"
	"github.com/exopower/exopower/internal/fakeplug"
)

// Each run over two nodes is one span on each, and its energy their sum:
// within 1 % of the sum of the fake's exact integrals over the nodes'
// spans. The baseline is measured over both nodes too. Each node's serve
// reads its own plug (30 W and 50 W): each run's wall is their sum, and
// the idle power at the wall too.
func TestBenchOverTwoNodesSumsThem(t *testing.T) {
	t.Parallel() // it waits on its nodes in real time, not on the CPU
	plugs := make([]*fakeplug.Fake, 2)
	var urls [2]string
	for i, w := range []float64{30, 50} {
		plugs[i], urls[i] = plug(t, fakeplug.ShellyGen2, func(c *fakeplug.Config) { c.Profile = fakeplug.Constant(w) })
	}
	nodes := []*served{startServe(t, "0=10,2,0.5", nil, "-i", "100ms", "--node-name", "steady", "--wall", urls[0]),
		startServe(t, "0=3,1,0", []string{"FAKEPM_SEED=7"}, "-i", "100ms", "--node-name", "uneven", "--wall", urls[1])}
	cmd, _ := exopowerCmd(t, "bench", "--json", "-r", "2", "--baseline", "1s", "--node", nodes[0].url, "--node", nodes[1].url, "sleep 0.5")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("exopower bench: %v", err)
	}
	var rep bench.Report
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	if len(rep.Results) != 1 || len(rep.Results[0].Runs) != 2 {
		t.Fatalf("report %s", out)
	}
	for _, run := range rep.Results[0].Runs {
		if len(run.Nodes) != 2 {
			t.Fatalf("run with %d node spans, want 2", len(run.Nodes))
		}
		var want float64
		for i, n := range nodes {
			want += truth(t, n, run.Nodes[i])
		}
		within(t, "run's total", float64(run.EnergyJoules.Total), want, 1)
		var wall float64
		for i, f := range plugs {
			n := run.Nodes[i]
			wall += f.Energy(mustTime(t, n.StartedAt), mustTime(t, n.EndedAt))
		}
		if run.Wall == nil {
			t.Fatalf("a run over two nodes with plugs has no wall")
		}
		within(t, "run's wall", float64(run.Wall.EnergyJoules), wall, 1)
	}
	b := rep.Baseline
	if b == nil || b.Before == nil || b.After == nil {
		t.Fatalf("baseline %+v", b)
	}
	// The nodes draw a constant 12.5 W and 4 W (the second in windows of
	// uneven length): the idle power is their sum.
	within(t, "idle power of both", float64(b.PowerWatts), 12.5+4, 1)
	if b.Wall == nil || rep.Results[0].Wall == nil {
		t.Fatalf("no wall in the baseline (%+v) or the result (%+v)", b.Wall, rep.Results[0].Wall)
	}
	within(t, "idle power of both at the wall", float64(b.Wall.PowerWatts), 30+50, 1)
	if math.IsNaN(float64(b.PowerWatts)) || b.Before.Windows < 2 {
		t.Errorf("baseline %+v", b.Before)
	}
}

// This Mac among the nodes (local) is measured in every run, over its
// own stream (6 W here), not in the first alone.
func TestBenchOverANodeAndThisMacMeasuresThisMacInEveryRun(t *testing.T) {
	t.Parallel() // it waits on its node in real time, not on the CPU
	node := elsewhere(t, startNode(t, "remote", "0=10,0,0"))
	cmd, _ := exopowerCmd(t, "bench", "--json", "-r", "3", "--baseline", "0", "--node", node.url, "--node", "local", "sleep 0.3")
	cmd.Env = append(cmd.Env, "FAKEPM_PROFILE=0=5,1,0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("exopower bench: %v", err)
	}
	var rep bench.Report
	if err := json.Unmarshal(out, &rep); err != nil || len(rep.Results) != 1 || len(rep.Results[0].Runs) != 3 {
		t.Fatalf("report %s: %v", out, err)
	}
	for i, run := range rep.Results[0].Runs {
		if len(run.Nodes) != 2 || run.Nodes[1].URL != "local" {
			t.Fatalf("run %d: nodes %+v, want the remote one and local", i+1, run.Nodes)
		}
		local := run.Nodes[1]
		secs := float64(local.DurationSeconds)
		if local.Samples == 0 || secs < 0.3 {
			t.Errorf("run %d: this Mac measured %d windows over %v s", i+1, local.Samples, secs)
			continue
		}
		within(t, fmt.Sprintf("run %d: this Mac's power", i+1), float64(local.EnergyJoules.Total)/secs, 6, 1)
	}
}
