package cluster

import (
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
