package cluster

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/exopower/exopower/internal/wire"
)

// totalWall is the cluster's energy at the wall: the sum over the plugs
// the nodes read (their serve's --wall), each plug once, however many
// nodes read it (Macs on one power strip behind one plug), and the
// warnings that come with it. It is nil, and says why, where some nodes
// read no plug: a sum of some nodes' walls is not the cluster's, and the
// text leads with the wall where it is known. Its average power is over
// the cluster's elapsed time, as the other figures of the total.
func totalWall(nodes []wire.NodeSummary, elapsed time.Duration) (*wire.Wall, []string) {
	var without, kinds []string
	byPlug := map[string][]string{}
	var plugs []*wire.Wall
	for _, n := range nodes {
		name := cmp.Or(n.Label, n.Node)
		if n.Wall == nil {
			without = append(without, name)
			continue
		}
		key := n.Wall.Source.Kind + " " + n.Wall.Source.Address + " " + n.Wall.Source.Name
		if byPlug[key] == nil {
			plugs = append(plugs, n.Wall)
			if !slices.Contains(kinds, n.Wall.Source.Kind) {
				kinds = append(kinds, n.Wall.Source.Kind)
			}
		}
		byPlug[key] = append(byPlug[key], name)
	}
	if len(plugs) == 0 {
		return nil, nil
	}
	if len(without) > 0 {
		return nil, []string{fmt.Sprintf("the wall is read on %d of the %d nodes (%s read no plug: give their serve --wall): the total has no wall figure",
			len(nodes)-len(without), len(nodes), strings.Join(without, ", "))}
	}
	var ws []string
	for _, p := range plugs {
		key := p.Source.Kind + " " + p.Source.Address + " " + p.Source.Name
		if names := byPlug[key]; len(names) > 1 {
			ws = append(ws, fmt.Sprintf("nodes %s read the same plug (%s at %s): it is counted once in the total", strings.Join(names, " and "), p.Source.Kind, p.Source.Address))
		}
	}
	w := sumWalls(plugs, kinds)
	if s := elapsed.Seconds(); s > 0 {
		w.AvgPowerWatts = wire.Num(float64(w.EnergyJoules) / s)
	}
	return w, ws
}

// sumWalls adds the plugs' figures: energy, uncertainty (each plug's
// bound, added: a bound of the sum; the average power is the caller's,
// over the cluster's elapsed time), polls and resets summed, coverage
// the lowest, the method one where all agree and "mixed" where not.
func sumWalls(plugs []*wire.Wall, kinds []string) *wire.Wall {
	w := &wire.Wall{Method: plugs[0].Method, Coverage: 1, Source: wire.WallSource{Kind: strings.Join(kinds, "+"), Address: fmt.Sprintf("%d plugs", len(plugs))}}
	if len(plugs) == 1 {
		w.Source = plugs[0].Source
	}
	for _, p := range plugs {
		w.EnergyJoules += p.EnergyJoules
		w.UncertaintyJoules += p.UncertaintyJoules
		w.Polls += p.Polls
		w.Resets += p.Resets
		w.Coverage = wire.Num(math.Min(float64(w.Coverage), float64(p.Coverage)))
		w.Source.IntervalSeconds = max(w.Source.IntervalSeconds, p.Source.IntervalSeconds)
		if p.Method != w.Method {
			w.Method = "mixed"
		}
	}
	return w
}
