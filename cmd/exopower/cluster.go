package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/exopower/exopower/internal/child"
	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/cluster"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/sampler"
	"github.com/exopower/exopower/internal/wire"
)

// nodeOptions are the flags of a run over several Macs.
type nodeOptions struct {
	urls            []string
	file            string
	credentials     string
	caFile          string
	skipUnreachable bool
}

func (n *nodeOptions) addFlags(c *cobra.Command) {
	c.Flags().StringArrayVar(&n.urls, "node", nil, "measure the Mac whose exopower serve is at `URL` (repeat for more; \"local\" is this Mac, measured only when named)")
	c.Flags().StringVar(&n.file, "nodes", "", "read node URLs from `FILE`, one a line")
	c.Flags().StringVar(&n.credentials, "node-credentials", "", "basic-auth credentials for nodes from `FILE`: lines of URL USER PASSWORD (else $EXOPOWER_NODE_USER and $EXOPOWER_NODE_PASSWORD)")
	c.Flags().StringVar(&n.caFile, "node-ca", "", "trust the CA certificates in `FILE` for https nodes, besides the system's")
	c.Flags().BoolVar(&n.skipUnreachable, "skip-unreachable", false, "go on without the nodes that do not answer before the start (the summary names them)")
}

func (n *nodeOptions) given() bool { return len(n.urls) > 0 || n.file != "" }

// targets reads the nodes, their credentials and CAs.
func (n *nodeOptions) targets(getenv func(string) string) ([]cluster.Target, cluster.Auth, error) {
	var file io.Reader
	if n.file != "" {
		f, err := os.Open(n.file)
		if err != nil {
			return nil, cluster.Auth{}, cli.Fail(fmt.Errorf("--nodes: %w", err))
		}
		defer f.Close()
		file = f
	}
	ts, err := cluster.ParseTargets(n.urls, file)
	if err == nil && len(ts) == 0 {
		err = errors.New("--nodes names no node")
	}
	if err != nil {
		return nil, cluster.Auth{}, cli.Fail(err, "name each node once, as http://HOST:PORT of its exopower serve, or local for this Mac")
	}
	var creds io.Reader
	if n.credentials != "" {
		f, err := os.Open(n.credentials)
		if err != nil {
			return nil, cluster.Auth{}, cli.Fail(fmt.Errorf("--node-credentials: %w", err))
		}
		defer f.Close()
		creds = f
	}
	auth, err := cluster.LoadAuth(creds, getenv)
	if err != nil {
		return nil, cluster.Auth{}, cli.Fail(err)
	}
	return ts, auth, nil
}

// runCluster measures the command over several Macs: a span on every node,
// opened before the command starts and ended after it exits, all at once.
func (o *runOptions) runCluster(ctx context.Context, s *cli.Streams, cmd child.Command) error {
	setup := nodeSetup{n: &o.nodes, pm: o.powermetricsPath(s.Getenv), interval: o.interval, rerun: "exopower run -- " + output.ShellQuote(o.argv)}
	members, skipped, err := setup.begin(ctx, s)
	if err != nil {
		return err
	}
	start := time.Now()
	p, err := child.Start(cmd)
	if err != nil {
		cluster.EndAll(context.Background(), members, time.Now())
		return err
	}
	exit, signals, late := waitCommand(s, p)
	endCtx, stopEnd := cli.CancelOnSignal(context.Background(), s.Signals)
	if signals > 1 || late {
		stopEnd()
	}
	nodes := cluster.EndAll(endCtx, members, exit.At)
	stopEnd()
	return o.deliver(s, clusterTotal(nodes, skipped, start, exit.At), exit, signals, cmd.Identity)
}

// clusterTotal is the cluster's summary, naming the nodes left out.
func clusterTotal(nodes []wire.NodeSummary, skipped []string, start, end time.Time) *wire.Summary {
	sum := cluster.Total(nodes, start, end.Sub(start))
	for _, t := range skipped {
		sum.Warnings = append(sum.Warnings, "node "+t+" did not answer before the start and is not measured (--skip-unreachable): the total leaves it out")
	}
	return sum
}

// nodeSetup says how to reach the nodes of a run or a watch.
type nodeSetup struct {
	n        *nodeOptions
	pm       string // this Mac's powermetrics
	interval time.Duration
	rerun    string
	// onLocal, when not nil, is handed this Mac's windows, as
	// Sampler.Begin hands them.
	onLocal func(sampler.Window, sampler.Totals)
}

// begin reaches every node and opens a span on each, all at once. A
// signal meanwhile ends it before anything starts.
func (c nodeSetup) begin(ctx context.Context, s *cli.Streams) ([]cluster.Member, []string, error) {
	targets, auth, err := c.n.targets(s.Getenv)
	if err != nil {
		return nil, nil, err
	}
	tlsConf, err := cluster.TLSConfig(c.n.caFile)
	if err != nil {
		return nil, nil, cli.Fail(fmt.Errorf("--node-ca: %w", err))
	}
	startCtx, stopStart := cli.CancelOnSignal(ctx, s.Signals)
	members, skipped, err := c.connect(startCtx, targets, auth, tlsConf)
	if err == nil {
		if err = cluster.BeginAll(startCtx, members); err != nil {
			stopLocal(members)
		}
	}
	if stopStart() && err == nil {
		cluster.EndAll(context.Background(), members, time.Now())
		err = errors.New("interrupted before the start; nothing was run")
	}
	if err != nil {
		var se *cli.Error
		if errors.As(err, &se) {
			return nil, nil, err
		}
		return nil, nil, cli.Fail(err, "check that exopower serve runs on each node (curl URL/v1/status), or pass --skip-unreachable")
	}
	return members, skipped, nil
}

// connect reaches every node at once: a remote one by its status, this
// Mac by starting powermetrics. Nodes that do not answer are an error,
// unless --skip-unreachable: then they are left out and named.
func (c nodeSetup) connect(ctx context.Context, ts []cluster.Target, auth cluster.Auth, tlsConf *tls.Config) ([]cluster.Member, []string, error) {
	members := make([]cluster.Member, len(ts))
	errs := make([]error, len(ts))
	var wg sync.WaitGroup
	for i, t := range ts {
		wg.Go(func() {
			if t.Local {
				meter, err := startMeasuring(ctx, c.pm, c.interval, c.rerun)
				if err == nil {
					members[i] = &localMember{meter: meter, interval: c.interval, onWindow: c.onLocal}
				}
				errs[i] = err
				return
			}
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			r, err := cluster.Connect(cctx, cluster.NewClient(t, auth, tlsConf))
			if err != nil {
				errs[i] = fmt.Errorf("node %s: %w", t.Name(), err)
				return
			}
			members[i] = r
		})
	}
	wg.Wait()
	var kept []cluster.Member
	var skipped []string
	var failed []error
	for i, m := range members {
		switch {
		case errs[i] == nil:
			kept = append(kept, m)
		case c.n.skipUnreachable && !ts[i].Local:
			skipped = append(skipped, ts[i].Name())
		default:
			failed = append(failed, errs[i])
		}
	}
	if len(failed) > 0 {
		stopLocal(kept)
		return nil, nil, errors.Join(failed...)
	}
	if len(kept) == 0 {
		return nil, nil, errors.New("no node answered")
	}
	return kept, skipped, nil
}

// stopLocal stops this Mac's powermetrics, if it was started.
func stopLocal(ms []cluster.Member) {
	for _, m := range ms {
		if l, ok := m.(*localMember); ok {
			l.meter.Stop()
		}
	}
}

// localMember is this Mac among the nodes, measured as exopower run does.
type localMember struct {
	meter    *sampler.Sampler
	span     *sampler.Span
	interval time.Duration
	onWindow func(sampler.Window, sampler.Totals)
}

func (l *localMember) Name() string {
	name, err := os.Hostname()
	if err != nil {
		return cluster.Local
	}
	return name
}

func (l *localMember) URL() string { return cluster.Local }

func (l *localMember) Begin(ctx context.Context) error {
	l.span = l.meter.Begin(ctx, l.onWindow)
	return nil
}

func (l *localMember) End(ctx context.Context, at time.Time) wire.NodeSummary {
	res := endMeasuring(ctx, l.meter, l.span, at)
	end := l.span.Start.Add(res.Duration)
	return wire.NodeSummary{Summary: output.NewSummary(res, l.span.Start, l.interval), Node: l.Name(), URL: cluster.Local,
		EndedAt: end.UTC().Format(time.RFC3339Nano)}
}
