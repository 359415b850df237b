package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/cluster"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/sampler"
	"github.com/exopower/exopower/internal/wire"
)

// nodeLine is a window of node i.
type nodeLine struct {
	i int
	l wire.SampleLine
}

// watchNodes shows several Macs live: a row per node and the total on a
// terminal, a line per node's window and a total line otherwise. Each
// node streams its windows (GET /v1/windows); a span on each, opened at
// the start and ended at the end, makes the summary, as in run --node.
func (o *watchOptions) watchNodes(ctx context.Context, s *cli.Streams) error {
	lines := make(chan nodeLine, 256)
	// This Mac's windows come from its Sampler's goroutine, which may
	// hand one over before its place among the nodes is known: they come
	// as node -1, and followNodes puts them in their place.
	setup := nodeSetup{n: &o.nodes, pm: o.powermetricsPath(s.Getenv), interval: o.interval, rerun: "exopower watch",
		onLocal: func(w sampler.Window, tot sampler.Totals) {
			select {
			case lines <- nodeLine{-1, output.NewSampleLine(w, tot)}:
			default: // a slow terminal drops a line, never a window of the span
			}
		}}
	members, skipped, err := setup.begin(ctx, s)
	if err != nil {
		return err
	}
	start := time.Now()
	names, local, stopStreams := streamNodes(members, lines)
	sink, err := output.NewClusterSink(output.SinkConfig{
		Format:   output.ChooseFormat(o.json, s.OutTTY),
		Terminal: output.Terminal{Out: s.Out, TTY: s.OutTTY, Size: s.TermSize},
		Getenv:   s.Getenv,
	}, names)
	end := time.Now()
	if err == nil {
		end, err = o.followNodes(s, sink, lines, start, len(members), local)
		if cerr := sink.Close(); err == nil {
			err = cerr
		}
	}
	stopStreams()
	endCtx, stopEnd := cli.CancelOnSignal(context.Background(), s.Signals)
	nodes := cluster.EndAll(endCtx, members, end)
	stopEnd()
	// A watch has no command to time: its span over the cluster is the
	// longest of the nodes' own spans, which all hold it.
	for _, n := range nodes {
		if d := time.Duration(float64(n.DurationSeconds) * float64(time.Second)); end.Sub(start) < d {
			start = end.Add(-d)
		}
	}
	sum := clusterTotal(nodes, skipped, start, end)
	sum.Title = fmt.Sprintf("watch: %d nodes", len(members))
	serr := printSummary(s, o.json, o.json, sum)
	if err != nil {
		return cli.Wrote("stdout", err)
	}
	return serr
}

// streamNodes streams every remote node's windows into lines, and
// returns the nodes' names, this Mac's place among them (-1: not one) and
// the function that stops the streams and waits for them.
func streamNodes(members []cluster.Member, lines chan<- nodeLine) (names []string, local int, stop func()) {
	names, local = make([]string, len(members)), -1
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i, m := range members {
		names[i] = m.Name()
		switch m := m.(type) {
		case *cluster.Remote:
			wg.Go(func() {
				m.Stream(ctx, func(l wire.SampleLine) {
					select {
					case lines <- nodeLine{i, l}:
					case <-ctx.Done():
					}
				})
			})
		case *localMember:
			local = i
		}
	}
	return names, local, func() {
		cancel()
		wg.Wait()
	}
}

// followNodes shows the nodes' windows until --duration, --count (windows
// of every node), a signal or a failure to show one, and returns the end.
func (o *watchOptions) followNodes(s *cli.Streams, sink output.ClusterSink, lines <-chan nodeLine, t0 time.Time, n, local int) (time.Time, error) {
	var timeout <-chan time.Time
	if o.duration > 0 {
		timer := time.NewTimer(o.duration - time.Since(t0))
		defer timer.Stop()
		timeout = timer.C
	}
	counts := make([]int, n)
	done := 0
	for {
		select {
		case nl := <-lines:
			if nl.i < 0 {
				nl.i = local
			}
			if err := sink.Window(nl.i, nl.l); err != nil {
				return time.Now(), err
			}
			if counts[nl.i]++; o.count > 0 && counts[nl.i] == o.count {
				if done++; done == n {
					return time.Now(), nil
				}
			}
		case <-s.Resized:
			if err := sink.Resize(); err != nil {
				return time.Now(), err
			}
		case <-timeout:
			return t0.Add(o.duration), nil
		case <-s.Signals:
			return time.Now(), nil
		}
	}
}
