package cluster

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/wire"
)

// A total of some nodes' walls is not the cluster's: where a node reads
// no plug, the total has no wall, and says which node.
func TestTheTotalHasNoWallWhereANodeReadsNoPlug(t *testing.T) {
	plugged := func(name string, j wire.Num) wire.NodeSummary {
		return wire.NodeSummary{Node: name, Summary: &wire.Summary{Wall: &wire.Wall{EnergyJoules: j, Method: "counter", Coverage: 1,
			Source: wire.WallSource{Kind: "kasa", Address: "kasa://" + name}}}}
	}
	bare := wire.NodeSummary{Node: "b", Summary: &wire.Summary{}}
	sum := Total([]wire.NodeSummary{plugged("a", 10), bare}, nil, time.Now(), time.Second)
	if sum.Wall != nil || !strings.Contains(strings.Join(sum.Warnings, "\n"), "read on 1 of the 2 nodes (b read no plug") {
		t.Errorf("wall %+v, warnings %q", sum.Wall, sum.Warnings)
	}
	sum = Total([]wire.NodeSummary{bare, bare}, nil, time.Now(), time.Second)
	if sum.Wall != nil || len(sum.Warnings) != 0 {
		t.Errorf("no node reads a plug: wall %+v, warnings %q", sum.Wall, sum.Warnings)
	}
	sum = Total([]wire.NodeSummary{plugged("a", 10), plugged("c", 30)}, nil, time.Now(), 2*time.Second)
	if w := sum.Wall; w == nil || w.EnergyJoules != 40 || w.AvgPowerWatts != 20 || w.Source.Address != "2 plugs" || w.Source.Kind != "kasa" {
		t.Errorf("two plugs of one kind: %+v", w)
	}
	// Two Macs behind one plug (a power strip), each serve reading it
	// whole: the plug once, and said.
	same := plugged("a", 10)
	same.Node = "c"
	sum = Total([]wire.NodeSummary{plugged("a", 10), same, plugged("b", 5)}, nil, time.Now(), time.Second)
	if w := sum.Wall; w == nil || w.EnergyJoules != 15 || w.Source.Address != "2 plugs" || !strings.Contains(strings.Join(sum.Warnings, "\n"), "nodes a and c read the same plug (kasa at kasa://a)") {
		t.Errorf("one plug behind two nodes: %+v, warnings %q", w, sum.Warnings)
	}
}

// A node's wall is held to what a plug could read, as the rest of its
// answer is, and its text is made safe: a node cannot make the total
// negative, infinite or no number, nor write to the terminal.
func TestANodesWallIsCheckedAndCleaned(t *testing.T) {
	good := func() *wire.Wall {
		return &wire.Wall{EnergyJoules: 100, UncertaintyJoules: 2, Method: "counter", Coverage: 1, Polls: 3,
			Source: wire.WallSource{Kind: "kasa\x1b[2J", Address: "kasa://a", Model: "HS110\x1b]0;owned\a"}}
	}
	for _, c := range []struct {
		name string
		edit func(*wire.Wall)
		want string
	}{
		{"negative energy", func(w *wire.Wall) { w.EnergyJoules = -1000 }, "energy_joules"},
		{"beyond any Mac", func(w *wire.Wall) { w.EnergyJoules = 1.7e308 }, "energy_joules"},
		{"no number", func(w *wire.Wall) { w.UncertaintyJoules = wire.Num(math.NaN()) }, "uncertainty_joules"},
		{"a coverage of 7", func(w *wire.Wall) { w.Coverage = 7 }, "coverage"},
		{"negative polls", func(w *wire.Wall) { w.Polls = -1 }, "polls"},
		{"another method", func(w *wire.Wall) { w.Method = "\x1b]0;owned\a" }, "method"},
	} {
		w := good()
		c.edit(w)
		if err := checkWall(w, 10); err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\x1b") {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	w := good()
	if err := checkWall(w, 10); err != nil || strings.ContainsAny(w.Source.Kind+w.Source.Model, "\x1b\a") || w.AvgPowerWatts != 10 {
		t.Errorf("a good wall: %v, %+v", err, w)
	}
}

// A node that claims another node's plug with less energy cannot hide
// it: the larger reading stands, and the disagreement is said.
func TestANodeClaimingAnothersPlugCannotHideItsEnergy(t *testing.T) {
	node := func(name string, j wire.Num) wire.NodeSummary {
		return wire.NodeSummary{Node: name, Summary: &wire.Summary{Wall: &wire.Wall{EnergyJoules: j, UncertaintyJoules: 1, Method: "counter", Coverage: 1,
			Source: wire.WallSource{Kind: "shelly-gen2", Address: "shelly://10.0.0.20"}}}}
	}
	sum := Total([]wire.NodeSummary{node("liar", 0), node("honest", 1000)}, nil, time.Now(), 10*time.Second)
	if w := sum.Wall; w == nil || w.EnergyJoules != 1000 || !strings.Contains(strings.Join(sum.Warnings, "\n"), "nodes liar and honest read the same plug (shelly-gen2 at shelly://10.0.0.20) and disagree") {
		t.Errorf("wall %+v, warnings %q", w, sum.Warnings)
	}
}
