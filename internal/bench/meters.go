package bench

import (
	"context"
	"time"

	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/cluster"
	"github.com/exopower/exopower/internal/sampler"
	"github.com/exopower/exopower/internal/wire"
)

// StreamMeter measures each run as a span of this Mac's one stream.
type StreamMeter struct {
	meter *sampler.Sampler
	span  *sampler.Span
}

// NewStreamMeter measures over meter.
func NewStreamMeter(meter *sampler.Sampler) *StreamMeter { return &StreamMeter{meter: meter} }

// Begin opens a span of the stream.
func (m *StreamMeter) Begin(ctx context.Context) error {
	m.span = m.meter.Begin(ctx, nil)
	return nil
}

// End closes the span at at.
func (m *StreamMeter) End(ctx context.Context, at time.Time, status int, signal string) Run {
	return NewRun(m.meter.End(ctx, m.span, at), m.span.Start, status, signal)
}

// Idle measures one span of the idle Mac: its energy over the time its
// windows covered.
func (m *StreamMeter) Idle(ctx context.Context, d time.Duration, sleep func(time.Duration) bool) (IdleSpan, error) {
	span := m.meter.Begin(ctx, nil)
	end := span.Start.Add(d)
	if !sleep(d) {
		end = time.Now()
	}
	return idleSpan(m.meter.End(ctx, span, end)), nil
}

// idleSpan is the piece of idle time that r measured: the time its
// windows covered, and its power over that time (all of it but for a
// gap in the stream).
func idleSpan(r sampler.Result) IdleSpan {
	s := IdleSpan{Start: r.Start, Windows: r.Samples}
	if secs := r.Duration.Seconds() * r.Coverage; secs > 0 {
		s.Window = Window{Seconds: secs, Watts: r.Energy.Total / secs, SystemWatts: r.Energy.System / secs, HasSystem: r.Has.System}
	}
	return s
}

// Close stops the stream: the report names the machine that its first
// document named, and warns of a stream that did not end cleanly.
func (m *StreamMeter) Close() (wire.Source, []string) {
	t := m.meter.Totals()
	src := wire.Source{Tool: t.Source, HWModel: t.HWModel, OSBuild: t.OSBuild}
	if err := m.meter.Stop(); err != nil {
		return src, []string{t.Source + ": " + err.Error()}
	}
	return src, nil
}

// NodesMeter measures each run as a span on every node at once, summed.
type NodesMeter struct {
	members  []cluster.Member
	skipped  []cluster.Skipped
	interval time.Duration
	name     string
	start    time.Time
}

// NewNodesMeter measures over the members, streams of the source named
// name at interval; skipped are the nodes left out, named in every run's
// warnings.
func NewNodesMeter(members []cluster.Member, skipped []cluster.Skipped, interval time.Duration, name string) *NodesMeter {
	return &NodesMeter{members: members, skipped: skipped, interval: interval, name: name}
}

// Begin opens a span on every node.
func (n *NodesMeter) Begin(ctx context.Context) error {
	n.start = time.Now()
	if err := cluster.BeginAll(ctx, n.members); err != nil {
		return cli.Fail(err, "the runs so far are in the summary; check that exopower serve runs on each node (curl URL/v1/status)")
	}
	return nil
}

// End closes the spans at at, and sums them.
func (n *NodesMeter) End(ctx context.Context, at time.Time, status int, signal string) Run {
	nodes := cluster.EndAll(ctx, n.members, at)
	return NewClusterRun(cluster.Total(nodes, n.skipped, n.start, at.Sub(n.start)), status, signal)
}

// Idle measures one span of the idle nodes: its power is the sum of
// each node's energy over its own span's length.
func (n *NodesMeter) Idle(ctx context.Context, d time.Duration, sleep func(time.Duration) bool) (IdleSpan, error) {
	if err := n.Begin(ctx); err != nil {
		return IdleSpan{}, err
	}
	from := n.start
	at := from.Add(d)
	if !sleep(d) {
		at = time.Now()
	}
	// Each node's power over its own span: a remote node's span ends
	// when the request reaches it, not at at.
	s := IdleSpan{Start: from, Window: Window{HasSystem: true}}
	run := n.End(ctx, at, 0, "")
	for _, ns := range run.Nodes {
		if secs := float64(ns.DurationSeconds); secs > 0 {
			s.Watts += float64(ns.EnergyJoules.Total) / secs
			if sys := ns.EnergyJoules.System; sys != nil {
				s.SystemWatts += float64(*sys) / secs
			}
		}
		s.HasSystem = s.HasSystem && ns.EnergyJoules.System != nil
		s.Windows += ns.Samples
	}
	s.Seconds = at.Sub(from).Seconds()
	s.Wall = nodesIdleWall(run)
	return s, nil
}

// nodesIdleWall is an idle piece at the wall over the nodes: their
// plugs' energy (each plug once) over the nodes' own spans, as long on
// average as the nodes' (a remote node's span runs from when the
// requests reach it); nil where the nodes read no plug.
func nodesIdleWall(run Run) *WallPiece {
	w := run.Wall
	if w == nil || len(run.Nodes) == 0 {
		return nil
	}
	var secs float64
	for _, ns := range run.Nodes {
		secs += float64(ns.DurationSeconds)
	}
	secs /= float64(len(run.Nodes))
	return &WallPiece{Seconds: secs * float64(w.Coverage), Joules: float64(w.EnergyJoules), UncertaintyJoules: float64(w.UncertaintyJoules)}
}

// Close lets go of the nodes, this Mac's stream among them.
func (n *NodesMeter) Close() (wire.Source, []string) {
	cluster.CloseAll(n.members)
	return wire.Source{Tool: n.name}, nil
}
