package cluster

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/exopower/exopower/internal/power"
	"github.com/exopower/exopower/internal/wire"
)

// EndSlack is how long past a node's interval the end of its span may
// take: the node waits up to an interval and a second for the window that
// covers the end, and the network adds its part.
const EndSlack = 2 * time.Second

// Member is one node of a run over several Macs.
type Member interface {
	// Name is the node's name (its hostname, or --node-name).
	Name() string
	// URL is the node's address, or "local".
	URL() string
	// Begin opens the node's span.
	Begin(ctx context.Context) error
	// End closes the span at about at (by this Mac's clock) and returns
	// the node's measurement; it never takes longer than the node's
	// interval and EndSlack.
	End(ctx context.Context, at time.Time) wire.NodeSummary
	// Stream hands f the node's windows as they come, as the lines of
	// watch --json with the energy cumulative from the stream's start,
	// until ctx ends or the node's stream is over (nil then, else why).
	// note tells what became of the stream: broken, back, or over. f
	// and note must not block: they are called from what reads the
	// node.
	Stream(ctx context.Context, f func(wire.SampleLine), note func(StreamNote)) error
	// Close lets go of what the member holds, such as this Mac's
	// powermetrics.
	Close()
}

// StreamState is what became of a member's stream of windows.
type StreamState int

const (
	// StreamBroke: the stream broke, and is being opened again.
	StreamBroke StreamState = iota + 1
	// StreamBack: it came back.
	StreamBack
	// StreamGone: it is over; no more windows of the node will come.
	StreamGone
)

// StreamNote tells the user what became of a member's stream.
type StreamNote struct {
	State StreamState
	// Text says so, naming the node, for stderr and the summary.
	Text string
}

// Skipped is a node left out at the start (--skip-unreachable), and why.
type Skipped struct {
	// Node is the node as given.
	Node string
	Err  error
}

// BeginAll opens every member's span at once and waits for all. When one
// fails, the spans that were opened are closed again and the error names
// the node.
func BeginAll(ctx context.Context, ms []Member) error {
	errs := make([]error, len(ms))
	var wg sync.WaitGroup
	for i, m := range ms {
		wg.Go(func() {
			if err := m.Begin(ctx); err != nil {
				errs[i] = fmt.Errorf("node %s: %w", m.URL(), err)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		// Closed, not measured: long enough for the request to reach the
		// node (which closes the span even when the client goes), no wait
		// for a window.
		undo, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		for i, m := range ms {
			if errs[i] == nil {
				m.End(undo, time.Now())
			}
		}
		return err
	}
	return nil
}

// EndAll closes every member's span at once: a slow node delays no other.
// Each node's summary is labelled apart from the others' (Labels).
func EndAll(ctx context.Context, ms []Member, at time.Time) []wire.NodeSummary {
	out := make([]wire.NodeSummary, len(ms))
	var wg sync.WaitGroup
	for i, m := range ms {
		wg.Go(func() { out[i] = m.End(ctx, at) })
	}
	wg.Wait()
	for i, label := range Labels(ms) {
		out[i].Label = label
	}
	return out
}

// Total is the cluster's summary: energy summed over the nodes, average
// power that sum over the elapsed time (not a mean of the nodes'
// averages), coverage the lowest node's, peak the sum of the nodes' peaks
// (a bound: peaks need not come at once), samples summed, and the energy
// bound that the round trips leave: each node's span edges are known to
// within its round trip, over which it may draw up to its peak. The
// interval is the longest of the nodes'. skipped are the nodes left out
// because they did not answer before the start, or not as exopower serve
// does (--skip-unreachable).
func Total(nodes []wire.NodeSummary, skipped []Skipped, started time.Time, elapsed time.Duration) *wire.Summary {
	sum := &wire.Summary{
		SchemaVersion:   wire.SchemaVersion,
		Type:            "summary",
		StartedAt:       started.UTC().Format(time.RFC3339Nano),
		DurationSeconds: wire.Num(elapsed.Seconds()),
		IntervalSeconds: 0,
		Coverage:        1,
		Scope:           wire.Scope,
		Source:          wire.Source{HWModel: fmt.Sprintf("%d nodes", len(nodes))},
		Warnings:        []string{},
		Nodes:           nodes,
	}
	var unc float64
	var energy, peak power.Values
	var has power.Reported
	withSystem := 0
	for _, n := range nodes {
		if n.EnergyJoules.System != nil {
			withSystem++
		}
		has = has.Or(n.EnergyJoules.Has())
		// The nodes' sources, each once: "powermetrics+ioreport" for a
		// cluster that reads both.
		if tools := strings.Split(sum.Source.Tool, "+"); n.Source.Tool != "" && !slices.Contains(tools, n.Source.Tool) {
			sum.Source.Tool = strings.TrimPrefix(sum.Source.Tool+"+"+n.Source.Tool, "+")
		}
		// The nodes' own intervals: this Mac's is not one unless it is a
		// node.
		sum.IntervalSeconds = wire.Num(math.Max(float64(sum.IntervalSeconds), float64(n.IntervalSeconds)))
		energy, peak = energy.Add(n.EnergyJoules.Values()), peak.Add(n.PeakPowerWatts.Values())
		sum.Samples += n.Samples
		sum.Rails.Add(n.Rails)
		sum.Coverage = wire.Num(math.Min(float64(sum.Coverage), float64(n.Coverage)))
		unc += 2 * float64(n.RoundTripSeconds) * float64(n.PeakPowerWatts.Total)
		sum.Warnings = append(sum.Warnings, nodeWarnings(n)...)
	}
	sum.EnergyJoules, sum.PeakPowerWatts = wire.NewComponents(energy, has), wire.NewComponents(peak, has)
	if s := elapsed.Seconds(); s > 0 {
		sum.AvgPowerWatts = wire.NewComponents(energy.Scale(1/s), has)
	}
	sum.MeasuredAvgPowerWatts = measuredTotal(sum, nodes, has)
	if withSystem > 0 && withSystem < len(nodes) {
		sum.Warnings = append(sum.Warnings, fmt.Sprintf("the system's power is known on %d of the %d nodes (the others read no SMC): the total's system is theirs alone", withSystem, len(nodes)))
	}
	var ws []string
	sum.Wall, ws = totalWall(nodes, elapsed)
	sum.Warnings = append(sum.Warnings, ws...)
	u := wire.Num(unc)
	sum.UncertaintyJoules = &u
	for _, t := range skipped {
		why := "did not answer before the start"
		if errors.Is(t.Err, ErrNotServe) {
			why = "answered as no exopower serve does (" + t.Err.Error() + ")"
		}
		sum.Warnings = append(sum.Warnings, "node "+t.Node+" "+why+" and is not measured (--skip-unreachable): the total leaves it out")
	}
	return sum
}

// measuredTotal is the cluster's average power over the time measured:
// the sum of each node's own (each node's power while it was measured),
// or the average itself when every moment of every node was measured;
// nil when a node measured nothing, whose power is then unknown.
func measuredTotal(sum *wire.Summary, nodes []wire.NodeSummary, has power.Reported) *wire.Components {
	if sum.Coverage >= 1 {
		c := sum.AvgPowerWatts
		return &c
	}
	var total power.Values
	for _, n := range nodes {
		m := n.MeasuredAverage()
		if m == nil {
			return nil
		}
		total = total.Add(m.Values())
	}
	c := wire.NewComponents(total, has)
	return &c
}

// nodeWarnings are what the total says of node n: its own warnings, that
// it was lost, that its clock is off this Mac's, each naming it by its
// label, since two nodes may have one name.
func nodeWarnings(n wire.NodeSummary) []string {
	name := cmp.Or(n.Label, n.Node)
	var ws []string
	for _, w := range n.Warnings {
		ws = append(ws, "node "+name+": "+w)
	}
	if n.Lost {
		ws = append(ws, fmt.Sprintf("node %s (%s) stopped answering: its row holds what it measured until then, and the total is partial", n.Node, n.URL))
	}
	if math.Abs(float64(n.ClockOffsetSeconds)) > 1 {
		ws = append(ws, fmt.Sprintf("node %s's clock is %.1f s off this Mac's: its span is by its own clock", name, float64(n.ClockOffsetSeconds)))
	}
	return ws
}
