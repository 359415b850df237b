package llm

import (
	"context"
	"time"

	"github.com/exopower/exopower/internal/bench"
	"github.com/exopower/exopower/internal/cluster"
	"github.com/exopower/exopower/internal/wire"
)

// Over --node, each node's serve reads its own plug (serve --wall), and
// a setting's run at the wall is their plugs summed, each plug once
// (cluster.Total). The idle power at the wall is read the same way: each
// idle span is a span on every node too, as bench --node's idle pieces
// are, and its piece at the wall is the nodes' plugs summed over it.

// overNodes says whether the meter measures the nodes of --node, not
// this Mac alone.
func (m *Meter) overNodes() bool {
	return len(m.members) != 1 || m.members[0].URL() != cluster.Local
}

// beginIdle opens a span on every node at the start of an idle span,
// over --node (this Mac alone reads its plug itself, --wall); it says
// whether it did. Where a node cannot open one the idle span has no
// piece at the wall, and so the baseline has no wall, and the report
// says why.
func (m *Meter) beginIdle(ctx context.Context) bool {
	if m.plug != nil || !m.overNodes() {
		return false
	}
	if err := m.begin(ctx); err != nil {
		if ctx.Err() == nil {
			m.note("the idle power at the wall over the nodes: " + err.Error())
		}
		m.idleWalls = append(m.idleWalls, nil)
		return false
	}
	return true
}

// endIdle closes the spans that beginIdle opened at to, the end of the
// idle span that began at from, and keeps the nodes' plugs' energy over
// them, summed, as the span's piece at the wall: nil where a node read
// no plug (a sum of some nodes' plugs is not the nodes' idle power).
func (m *Meter) endIdle(from, to time.Time) {
	// Closed even after a signal, as a setting's spans are: what was
	// measured is kept.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	nodes := cluster.EndAll(ctx, m.members, to)
	m.idleWalls = append(m.idleWalls, nodesIdleWall(cluster.Total(nodes, m.skipped, from, to.Sub(from))))
}

// nodesIdleWall is an idle piece at the wall over the nodes: their
// plugs' energy over the nodes' own spans, as long on average as the
// nodes' (a remote node's span runs from when the request reaches it),
// as bench --node's pieces are; nil where the nodes read no plug.
func nodesIdleWall(sum *wire.Summary) *bench.WallPiece {
	w := sum.Wall
	if w == nil || len(sum.Nodes) == 0 {
		return nil
	}
	var secs float64
	for _, n := range sum.Nodes {
		if n.Summary != nil {
			secs += float64(n.DurationSeconds)
		}
	}
	secs /= float64(len(sum.Nodes))
	return &bench.WallPiece{Seconds: secs * float64(w.Coverage), Joules: float64(w.EnergyJoules), UncertaintyJoules: float64(w.UncertaintyJoules)}
}

// nodesWallIdle is the idle power at the wall over the nodes, from each
// idle span's piece; nil unless every idle span has one.
func (m *Meter) nodesWallIdle() *bench.IdleWall {
	if len(m.idleWalls) == 0 {
		return nil
	}
	pieces := make([]bench.IdleSpan, len(m.idleWalls))
	for i, w := range m.idleWalls {
		pieces[i].Wall = w
	}
	return bench.NewIdleWall(pieces)
}
