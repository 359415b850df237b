package main

import (
	"context"
	"errors"
	"time"

	"github.com/exopower/exopower/internal/bench"
	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/cluster"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/sampler"
)

// runMeter measures one run at a time: over this Mac's powermetrics
// stream, or over the nodes of --node.
type runMeter interface {
	begin(ctx context.Context) error
	// end closes the span at at and describes it as a run of the command
	// that ended with status and signal.
	end(ctx context.Context, at time.Time, status int, signal string) bench.Run
}

// localMeter measures a run as a span of this Mac's stream.
type localMeter struct {
	m    *sampler.Sampler
	span *sampler.Span
}

func (l *localMeter) begin(ctx context.Context) error {
	l.span = l.m.Begin(ctx, nil)
	return nil
}

func (l *localMeter) end(ctx context.Context, at time.Time, status int, signal string) bench.Run {
	return bench.NewRun(l.m.End(ctx, l.span, at), l.span.Start, status, signal)
}

// nodesMeter measures a run as a span on every node at once, summed.
type nodesMeter struct {
	members  []cluster.Member
	skipped  []string
	interval time.Duration
	start    time.Time
}

func (n *nodesMeter) begin(ctx context.Context) error {
	n.start = time.Now()
	if err := cluster.BeginAll(ctx, n.members); err != nil {
		return cli.Fail(err, "the runs so far are in the summary; check that exopower serve runs on each node (curl URL/v1/status)")
	}
	return nil
}

func (n *nodesMeter) end(ctx context.Context, at time.Time, status int, signal string) bench.Run {
	nodes := cluster.EndAll(ctx, n.members, at)
	return bench.NewClusterRun(clusterTotal(nodes, n.skipped, n.start, at), status, signal)
}

// connectNodes reaches every node of --node before anything runs: one
// that does not answer is known then, not in the middle of the runs.
func connectNodes(ctx context.Context, s *cli.Streams, o *benchOptions) (*nodesMeter, error) {
	setup := nodeSetup{n: &o.nodes, pm: o.powermetricsPath(s.Getenv), interval: o.interval,
		rerun: "exopower bench " + output.ShellQuote(o.commands)}
	targets, auth, err := o.nodes.targets(s.Getenv)
	if err != nil {
		return nil, err
	}
	tlsConf, err := cluster.TLSConfig(o.nodes.caFile)
	if err != nil {
		return nil, cli.Fail(err)
	}
	startCtx, stopStart := cli.CancelOnSignal(ctx, s.Signals)
	members, skipped, err := setup.connect(startCtx, targets, auth, tlsConf)
	if stopStart() && err == nil {
		stopLocal(members)
		err = errors.New("interrupted before the first run; nothing was measured")
	}
	if err != nil {
		return nil, cli.Fail(err, "check that exopower serve runs on each node (curl URL/v1/status), or pass --skip-unreachable")
	}
	return &nodesMeter{members: members, skipped: skipped, interval: o.interval}, nil
}

// idleNodes measures the idle nodes for the baseline's duration, as
// spans back to back, each of at least two windows: the spread of their
// summed powers gives the idle power's error, as windows do for one Mac.
func (b *bencher) idleNodes(ctx context.Context, n *nodesMeter) idleSpan {
	chunk := max(2*b.o.interval, b.o.baseline/10)
	b.prog.idle(b.o.baseline)
	start := time.Now()
	var parts []bench.Window
	for done := time.Duration(0); done < b.o.baseline && !b.cut(); {
		d := min(chunk, b.o.baseline-done)
		if err := n.begin(ctx); err != nil {
			b.failed = err
			break
		}
		from := n.start
		b.sleep(d)
		at := from.Add(d)
		if b.signal != 0 {
			at = time.Now()
		}
		// Each node's power over its own span: a remote node's span ends
		// when the request reaches it, not at at.
		watts := 0.0
		for _, ns := range n.end(ctx, at, 0, "").Nodes {
			if d := float64(ns.DurationSeconds); d > 0 {
				watts += float64(ns.EnergyJoules.Total) / d
			}
		}
		if s := at.Sub(from).Seconds(); s > 0 {
			parts = append(parts, bench.Window{Seconds: s, Watts: watts})
		}
		done += d
	}
	return idleSpan{idle: bench.NewIdle(start, time.Since(start), parts), windows: parts}
}
