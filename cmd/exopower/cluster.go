package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/exopower/exopower/internal/boot"
	"github.com/exopower/exopower/internal/child"
	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/cluster"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/sampler"
	"github.com/exopower/exopower/internal/source"
)

// nodeOptions are the flags of a run over several Macs.
type nodeOptions struct{ cluster.Nodes }

func (n *nodeOptions) addFlags(c *cobra.Command) {
	c.Flags().StringArrayVar(&n.URLs, "node", nil, "measure the Mac whose exopower serve is at `URL` (repeat for more; \"local\" is this Mac, measured only when named)")
	c.Flags().StringVar(&n.File, "nodes", "", "read node URLs from `FILE`, one a line")
	c.Flags().StringVar(&n.Credentials, "node-credentials", "", "basic-auth credentials for nodes from `FILE`: lines of URL USER PASSWORD (else $EXOPOWER_NODE_USER and $EXOPOWER_NODE_PASSWORD)")
	c.Flags().StringVar(&n.CAFile, "node-ca", "", "trust the CA certificates in `FILE` for https nodes, besides the system's")
	c.Flags().BoolVar(&n.SkipUnreachable, "skip-unreachable", false, "go on without the nodes that do not answer before the start (the summary names them)")
}

// setup says how to reach the nodes, this Mac's stream started as
// opts says, should it be one. The nodes' files are read as the user who
// ran sudo, whatever the command runs as (--as-root): root may read any
// file, and the user must not read through exopower what they may not.
func (n *nodeOptions) setup(s *cli.Streams, opts source.Options) cluster.Setup {
	return cluster.Setup{Nodes: n.Nodes, Getenv: s.Getenv, Interval: opts.Interval, Boot: boot.ID(),
		Start: func(ctx context.Context) (*sampler.Sampler, error) { return source.Start(ctx, opts) },
		Warn:  func(w string) { fmt.Fprintln(s.Err, "exopower: warning: "+w) },
		ReadAs: func() (*syscall.Credential, error) {
			id, err := child.Identify(false, os.Geteuid(), s.Getenv, nil)
			return id.Cred, err
		}}
}

// connect reaches every node before anything starts. A signal meanwhile
// ends it with what, nothing having started, to say.
func connect(ctx context.Context, s *cli.Streams, setup cluster.Setup, nothing string) ([]cluster.Member, []cluster.Skipped, error) {
	startCtx, stopStart := cli.CancelOnSignal(ctx, s.Signals)
	members, skipped, err := setup.Connect(startCtx)
	if stopStart() && err == nil {
		cluster.CloseAll(members)
		err = cli.Fail(errors.New(nothing))
	}
	return members, skipped, err
}

// begin reaches every node and opens a span on each, all at once. A
// signal meanwhile ends it before anything starts.
func begin(ctx context.Context, s *cli.Streams, setup cluster.Setup) ([]cluster.Member, []cluster.Skipped, error) {
	members, skipped, err := connect(ctx, s, setup, "interrupted before the start; nothing was run")
	if err != nil {
		return nil, nil, err
	}
	startCtx, stopStart := cli.CancelOnSignal(ctx, s.Signals)
	err = cluster.BeginAll(startCtx, members)
	if stopStart() && err == nil {
		cluster.EndAll(context.Background(), members, time.Now())
		err = errors.New("interrupted before the start; nothing was run")
	}
	if err != nil {
		cluster.CloseAll(members)
		return nil, nil, cli.Fail(err, cluster.Unreachable)
	}
	return members, skipped, nil
}

// runCluster measures the command over several Macs: a span on every node,
// opened before the command starts and ended after it exits, all at once.
func (o *runOptions) runCluster(ctx context.Context, s *cli.Streams, cmd child.Command) error {
	members, skipped, err := begin(ctx, s, o.nodes.setup(s, o.sourceOptions(s.Getenv, "exopower run -- "+output.ShellQuote(o.argv))))
	if err != nil {
		return err
	}
	defer cluster.CloseAll(members)
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
	return o.deliver(s, cluster.Total(nodes, skipped, start, exit.At.Sub(start)), exit, signals, cmd.Identity)
}
