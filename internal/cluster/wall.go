package cluster

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/power"
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
	var without, kinds, disagree []string
	byPlug := map[string][]string{}
	index := map[string]int{}
	var plugs []*wire.Wall
	for _, n := range nodes {
		name := cmp.Or(n.Label, n.Node)
		if n.Wall == nil {
			without = append(without, name)
			continue
		}
		key := n.Wall.Source.Kind + " " + n.Wall.Source.Address + " " + n.Wall.Source.Name
		if i, seen := index[key]; seen {
			// Two readings of one plug over one span agree within their
			// bounds; where they do not, the larger stands (a node that
			// claims another's plug cannot hide its energy), and it is
			// said.
			if p := plugs[i]; !agree(p, n.Wall) {
				disagree = append(disagree, fmt.Sprintf("nodes %s and %s read the same plug (%s at %s) and disagree: %s and %s; the larger is in the total",
					byPlug[key][0], name, p.Source.Kind, p.Source.Address, output.Joules(float64(p.EnergyJoules)), output.Joules(float64(n.Wall.EnergyJoules))))
				if n.Wall.EnergyJoules > p.EnergyJoules {
					plugs[i] = n.Wall
				}
			}
		} else {
			index[key] = len(plugs)
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
	ws := disagree
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

// checkWall checks the wall a node's serve read over a span of secs (nil:
// none), and cleans its text: energy and uncertainty no Mac's plug could
// give (below 0, beyond what any Mac draws, not a number), a coverage
// outside [0, 1], counts below 0 or a method exopower does not have
// would pass into the total, or make it no number.
func checkWall(w *wire.Wall, secs float64) error {
	if w == nil {
		return nil
	}
	most := power.MaxSystemWatts * math.Max(secs, 1)
	e, u := float64(w.EnergyJoules), float64(w.UncertaintyJoules)
	switch {
	case !(e >= 0 && e <= most):
		return fmt.Errorf("wall.energy_joules %v is implausible: negative, or more than any Mac draws in %.3g s", e, secs)
	case !(u >= 0 && u <= most):
		return fmt.Errorf("wall.uncertainty_joules %v is implausible", u)
	case !(w.Coverage >= 0 && w.Coverage <= 1):
		return fmt.Errorf("wall.coverage %v is outside [0, 1]", float64(w.Coverage))
	case w.Polls < 0 || w.Resets < 0 || w.Polls > maxSamples || w.Resets > maxSamples:
		return fmt.Errorf("wall.polls %d or wall.resets %d is implausible", w.Polls, w.Resets)
	case w.Method != "counter" && w.Method != "power":
		return fmt.Errorf("wall.method %q is neither counter nor power", clean(w.Method))
	}
	src := &w.Source
	src.Kind, src.Model, src.Firmware, src.Name, src.Address = clean(src.Kind), clean(src.Model), clean(src.Firmware), clean(src.Name), clean(src.Address)
	if secs > 0 {
		w.AvgPowerWatts = wire.Num(e / secs)
	}
	return nil
}

// agree says whether two readings of one plug over one span are within
// their bounds of each other, and 1 % for the spans' edges.
func agree(a, b *wire.Wall) bool {
	d := math.Abs(float64(a.EnergyJoules - b.EnergyJoules))
	return d <= float64(a.UncertaintyJoules+b.UncertaintyJoules)+0.01*float64(max(a.EnergyJoules, b.EnergyJoules))+1
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
