package llm

import (
	"context"
	"sync"
	"time"

	"github.com/exopower/exopower/internal/bench"
	"github.com/exopower/exopower/internal/calibrate"
	"github.com/exopower/exopower/internal/cluster"
	"github.com/exopower/exopower/internal/sampler"
	"github.com/exopower/exopower/internal/wall"
	"github.com/exopower/exopower/internal/wire"
)

// Meter measures the Macs of a benchmark: each one's stream of windows,
// which requests are integrated over, and a span on each over every
// setting's requests, which gives their total exactly as exopower run
// would.
type Meter struct {
	members  []cluster.Member
	skipped  []cluster.Skipped
	interval time.Duration
	// local is this Mac's stream, when it is measured: its windows are
	// cut at each request's edges.
	local     *sampler.Sampler
	timelines []*Timeline
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	mu        sync.Mutex
	notes     []string
	// plug is the plug of --wall; nil without.
	plug *wall.Session
	// idleWalls are the idle spans' pieces at the wall over --node,
	// in order (beginIdle, endIdle).
	idleWalls []*bench.WallPiece
	// cal is this Mac's calibration, which each run's wall is estimated
	// from without a plug (EstimateWall); nil: none.
	cal *calibrate.Calibration
}

// NewMeter measures over members, streams sampled every interval;
// skipped are the nodes left out, named in the report.
func NewMeter(members []cluster.Member, skipped []cluster.Skipped, interval time.Duration) *Meter {
	m := &Meter{members: members, skipped: skipped, interval: interval}
	labels := cluster.Labels(members)
	for i, mem := range members {
		t := newTimeline(mem.Name(), mem.URL())
		t.Label = labels[i]
		m.timelines = append(m.timelines, t)
		if l, ok := mem.(*cluster.LocalMember); ok {
			m.local = l.Sampler()
		}
	}
	return m
}

// Start opens every node's stream of windows and waits (at most the
// time a node's window may take) for the first window of each.
func (m *Meter) Start(ctx context.Context) {
	sctx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	for i, mem := range m.members {
		t := m.timelines[i]
		m.wg.Go(func() {
			err := mem.Stream(sctx, t.add, func(n cluster.StreamNote) { m.note(n.Text) })
			if err != nil && sctx.Err() == nil {
				m.note("node " + t.Label + ": its stream of windows: " + err.Error())
			}
		})
	}
	wait := time.NewTimer(cluster.Wait(m.interval))
	defer wait.Stop()
	for _, t := range m.timelines {
		select {
		case <-t.seen:
		case <-wait.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

func (m *Meter) note(s string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.notes = append(m.notes, s)
}

// Sending cuts this Mac's window before a request leaves, and waits for
// the cut, so that no power drawn before it counts in the request.
func (m *Meter) Sending(ctx context.Context) {
	if m.local != nil {
		m.local.Cut(ctx, true)
	}
}

// Token cuts this Mac's window at a request's first token: the edge of
// its phases.
func (m *Meter) Token() {
	if m.local != nil {
		m.local.Cut(context.Background(), false)
	}
}

// Ended cuts this Mac's window at a request's end.
func (m *Meter) Ended() { m.Token() }

// begin opens a span on every node.
func (m *Meter) begin(ctx context.Context) error { return cluster.BeginAll(ctx, m.members) }

// end closes the spans at at and sums them; then it waits (at most a
// node's window wait) until every node's windows reach at, so that the
// requests' phases can be read. The nodes' clock offsets, as the spans
// tell them, place their windows on this Mac's clock.
func (m *Meter) end(ctx context.Context, start, at time.Time) *wire.Summary {
	nodes := cluster.EndAll(ctx, m.members, at)
	for i, n := range nodes {
		t := m.timelines[i]
		t.mu.Lock()
		t.offset = time.Duration(float64(n.ClockOffsetSeconds) * 1e9)
		t.mu.Unlock()
	}
	m.settle(ctx, at)
	// This Mac alone is summed as itself, as exopower run reports it.
	sum := nodes[0].Summary
	if len(nodes) != 1 || nodes[0].URL != cluster.Local || len(m.skipped) != 0 {
		sum = cluster.Total(nodes, m.skipped, start, at.Sub(start))
	}
	m.addWall(ctx, sum, start, at)
	m.addWallEstimate(sum)
	return sum
}

// settle waits until every node's windows reach at, or a node's window
// wait has passed.
func (m *Meter) settle(ctx context.Context, at time.Time) {
	deadline := time.Now().Add(cluster.Wait(m.interval))
	for _, t := range m.timelines {
		for !t.reaches(at) && time.Now().Before(deadline) && ctx.Err() == nil {
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// Close stops the streams and lets go of the nodes.
func (m *Meter) Close() []string {
	if m.cancel != nil {
		m.cancel()
	}
	m.wg.Wait()
	cluster.CloseAll(m.members)
	m.plug.Close()
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.notes
}
