package cluster

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/sampler"
	"github.com/exopower/exopower/internal/wire"
)

// LocalMember is this Mac among the nodes, measured over its own stream
// as exopower run measures without --node.
type LocalMember struct {
	meter    *sampler.Sampler
	span     *sampler.Span
	interval time.Duration
}

// NewLocal makes this Mac's stream, read at interval, a member. Close
// stops the stream.
func NewLocal(meter *sampler.Sampler, interval time.Duration) *LocalMember {
	return &LocalMember{meter: meter, interval: interval}
}

// Name is this Mac's hostname.
func (l *LocalMember) Name() string {
	name, err := os.Hostname()
	if err != nil {
		return Local
	}
	return name
}

// URL is "local".
func (l *LocalMember) URL() string { return Local }

// Begin opens a span of this Mac's stream.
func (l *LocalMember) Begin(ctx context.Context) error {
	l.span = l.meter.Begin(ctx, nil)
	return nil
}

// End closes the span at at, waiting for the window that covers it. When
// the stream has ended meanwhile (powermetrics died), how it ended is
// among the warnings, as for a run without --node.
func (l *LocalMember) End(ctx context.Context, at time.Time) wire.NodeSummary {
	res := l.meter.End(ctx, l.span, at)
	select {
	case <-l.meter.Done():
		if err := l.meter.Stop(); err != nil {
			res.Warnings = append(res.Warnings, res.Source+": "+err.Error())
		}
	default:
	}
	end := l.span.Start.Add(res.Duration)
	return wire.NodeSummary{Summary: output.NewSummary(res, l.span.Start, l.interval), Node: l.Name(), URL: Local,
		EndedAt: end.UTC().Format(time.RFC3339Nano)}
}

// Stream hands f this Mac's windows as they come, as serve's /v1/windows
// would (energy cumulative from the stream's start), over a span of its
// own, until ctx ends or the stream does; note tells of the latter,
// which nothing brings back.
func (l *LocalMember) Stream(ctx context.Context, f func(wire.SampleLine), note func(StreamNote)) error {
	sp := l.meter.Begin(ctx, func(w sampler.Window, tot sampler.Totals) { f(output.NewSampleLine(w, tot)) })
	select {
	case <-ctx.Done():
	case <-l.meter.Done():
		if ctx.Err() != nil {
			break
		}
		note(StreamNote{State: StreamGone, Text: fmt.Sprintf("node %s (%s): this Mac's stream of windows ended: its live row stops; the summary says how it ended", l.Name(), Local)})
	}
	// No wait for a window: nobody reads this span's result.
	done, cancel := context.WithCancel(context.Background())
	cancel()
	l.meter.End(done, sp, time.Now())
	return nil
}

// Sampler is this Mac's stream, for what must cut its windows at its
// own edges.
func (l *LocalMember) Sampler() *sampler.Sampler { return l.meter }

// Close stops this Mac's stream.
func (l *LocalMember) Close() { l.meter.Stop() }
