package bench

import (
	"context"
	"sync"
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

// Idle measures one span of the idle Mac, and keeps the parts of its
// windows inside it.
func (m *StreamMeter) Idle(ctx context.Context, d time.Duration, sleep func(time.Duration) bool) (IdleSpan, error) {
	var mu sync.Mutex
	var ws []sampler.Window
	span := m.meter.Begin(ctx, func(w sampler.Window, _ sampler.Totals) {
		mu.Lock()
		ws = append(ws, w)
		mu.Unlock()
	})
	end := span.Start.Add(d)
	if !sleep(d) {
		end = time.Now()
	}
	m.meter.End(ctx, span, end)
	mu.Lock()
	defer mu.Unlock()
	var parts []Window
	for _, w := range ws {
		from, to := w.Start, w.End
		if from.Before(span.Start) {
			from = span.Start
		}
		if to.After(end) {
			to = end
		}
		if p := to.Sub(from); p > 0 {
			parts = append(parts, Window{Seconds: p.Seconds(), Watts: w.Power.Total, SystemWatts: w.Power.System, HasSystem: w.Has.System})
		}
	}
	return IdleSpan{Idle: NewIdle(span.Start, end.Sub(span.Start), parts), Windows: parts}, nil
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

// Idle measures the idle nodes as spans back to back, each of at least
// two windows: the spread of their summed powers gives the idle power's
// error, as windows do for one Mac.
func (n *NodesMeter) Idle(ctx context.Context, d time.Duration, sleep func(time.Duration) bool) (IdleSpan, error) {
	chunk := max(2*n.interval, d/10)
	start := time.Now()
	var parts []Window
	var err error
	for done, more := time.Duration(0), true; done < d && more; done += chunk {
		c := min(chunk, d-done)
		if err = n.Begin(ctx); err != nil {
			break
		}
		from := n.start
		at := from.Add(c)
		if more = sleep(c); !more {
			at = time.Now()
		}
		// Each node's power over its own span: a remote node's span ends
		// when the request reaches it, not at at.
		w := Window{HasSystem: true}
		for _, ns := range n.End(ctx, at, 0, "").Nodes {
			if s := float64(ns.DurationSeconds); s > 0 {
				w.Watts += float64(ns.EnergyJoules.Total) / s
				if sys := ns.EnergyJoules.System; sys != nil {
					w.SystemWatts += float64(*sys) / s
				}
			}
			w.HasSystem = w.HasSystem && ns.EnergyJoules.System != nil
		}
		if w.Seconds = at.Sub(from).Seconds(); w.Seconds > 0 {
			parts = append(parts, w)
		}
	}
	return IdleSpan{Idle: NewIdle(start, time.Since(start), parts), Windows: parts}, err
}

// Close lets go of the nodes, this Mac's stream among them.
func (n *NodesMeter) Close() (wire.Source, []string) {
	cluster.CloseAll(n.members)
	return wire.Source{Tool: n.name}, nil
}
