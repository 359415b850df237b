package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/exopower/exopower/internal/boot"
	"github.com/exopower/exopower/internal/child"
	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/cli/usage"
	"github.com/exopower/exopower/internal/serve"
	"github.com/exopower/exopower/internal/source"
	"github.com/exopower/exopower/internal/wire"
)

// serveGrace is how long past one interval the end of a span waits for the
// window that covers it.
const serveGrace = time.Second

type serveOptions struct {
	commonOptions
	serve.Flags
	wall wallOptions
	apps serveAppsOptions
}

func newServeCmd(s *cli.Streams) *cobra.Command {
	var o serveOptions
	c := &cobra.Command{
		Use:   "serve [flags]",
		Short: "Serve energy counters to Prometheus, and spans over HTTP",
		Long: `Run powermetrics for as long as exopower runs, and serve what it measures over
HTTP: energy counters and power gauges at /metrics for Prometheus (increase()
over any range is that range's energy), the stream's state at /v1/status, and
spans: POST /v1/spans opens one, POST /v1/spans/ID/end closes it and answers
with its measurement, in the fields of exopower run --json. powermetrics is
started again when it dies. Listens on this machine only unless --listen says
otherwise, which then needs a web config with passwords (--web.config.file),
read again at every request: TLS is taken from it at start, and once it has
set passwords, the last ones stay in force while it cannot be used. Without
passwords, it answers only requests to localhost, 127.0.0.1 or this
machine's hostname; web pages of other origins may not open spans or streams.
Every user of the web config may scrape /metrics and /v1/status; spans and
the stream of windows are for the users of --web.span-users (every user when
it is not given), and spans that name a process (?pid=) for the users of
--web.process-users only.`,
		Example: `  sudo exopower serve
  curl -s localhost:10241/metrics | grep exopower_soc_energy
  id=$(curl -s -X POST localhost:10241/v1/spans | jq -r .id); make; curl -s -X POST localhost:10241/v1/spans/$id/end
  sudo exopower serve --listen :10241 --web.config.file web.yml`,
		Args: usage.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			// Not given is every user; given empty, none.
			if !c.Flags().Changed("web.span-users") {
				o.SpanUsers = nil
			}
			o.apps.tuned = c.Flags().Changed("apps.top") || c.Flags().Changed("apps.forget")
			return runServe(c.Context(), s, &o)
		},
	}
	o.addFlags(c, time.Second)
	o.wall.addFlags(c)
	o.apps.addFlags(c)
	c.Flags().StringVar(&o.Listen, "listen", wire.DefaultListen, "listen on `ADDR` (host:port); beyond loopback it needs --web.config.file with basic_auth_users")
	c.Flags().StringVar(&o.Node, "node-name", "", "the name of this machine in status and spans (default: the hostname)")
	c.Flags().StringVar(&o.WebConfig, "web.config.file", "", "a Prometheus web config `FILE`: TLS and basic auth, as exporters take it; read again at every request, but TLS is turned on or off only at start")
	c.Flags().StringSliceVar(&o.SpanUsers, "web.span-users", nil, "only these `USERS` of the web config (comma-separated) may open, read and end spans and stream windows; the others only scrape /metrics and /v1/status (default: every user)")
	c.Flags().StringSliceVar(&o.ProcessUsers, "web.process-users", nil, "these `USERS` of the web config (comma-separated) may also open spans that name a process (?pid=), and spans as the users of --web.span-users (default: none)")
	c.Flags().BoolVar(&o.ProcessSpansWithoutPassword, "web.process-spans-without-password", false, "as root, let this machine's clients without a password open spans that name a process (?pid=), any user's, as serve cannot tell who asks: for a Mac of one user (without root they may, for serve's user's processes)")
	c.Flags().IntVar(&o.MaxConns, "web.max-connections", serve.DefaultMaxConnections, "hold at most `N` connections at once (the next waits), and never more than half of the files exopower may open (ulimit -n)")
	return c
}

func runServe(ctx context.Context, s *cli.Streams, o *serveOptions) error {
	cfg, err := o.config(s)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		hint := "give an address of this machine and a port from 1 to 65535, such as " + wire.DefaultListen
		if errors.Is(err, syscall.EADDRINUSE) {
			hint = "is another exopower serve running? choose another address with --listen"
		}
		return cli.Fail(fmt.Errorf("--listen %s: %w", o.Listen, err), hint)
	}
	defer ln.Close()
	started := time.Now()
	startCtx, stopStart := cli.CancelOnSignal(ctx, s.Signals)
	if cfg.Wall, err = o.wall.startAsSelf(startCtx, s); err != nil {
		stopStart()
		return err
	}
	defer cfg.Wall.Close()
	opts := o.sourceOptions(s.Getenv, "exopower serve")
	opts.Grace = serveGrace
	meter, sup, err := source.Supervised(startCtx, opts)
	stopStart()
	if err != nil {
		return err
	}
	defer meter.Stop()
	cfg.Log = s.Err
	srv := serve.New(meter, sup, cfg)
	hs := srv.HTTPServer(serveGrace)
	nofile := serve.OpenFiles()
	maxConns, lowered := serve.MaxConnections(o.MaxConns, nofile)
	if lowered {
		fmt.Fprintf(s.Err, "exopower serve: --web.max-connections %d lowered to %d, half of the %d files exopower may open (ulimit -n): the rest are kept for the source and serve's own files\n",
			o.MaxConns, maxConns, nofile)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(hs, serve.Listen(ln, maxConns)) }()
	expiry, stopExpiry := context.WithCancel(ctx)
	defer stopExpiry()
	go srv.RunExpiry(expiry)
	go srv.RunApps(expiry)
	fmt.Fprintf(s.Err, "exopower serve: node %s, listening on %s (GET /metrics, GET /v1/status, POST /v1/spans)\n", cfg.Node, cfg.Web.Scheme()+ln.Addr().String())
	var stopped os.Signal
	select {
	case stopped = <-s.Signals:
	case err = <-served:
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	hs.Shutdown(shutdown)
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return cli.Fail(fmt.Errorf("serve: %w", err))
	}
	fmt.Fprintln(s.Err, serve.ClosingLine(stopped, srv.Served(), meter.Totals(), time.Since(started)))
	return nil
}

// config checks the flags and says what the server publishes.
func (o *serveOptions) config(s *cli.Streams) (serve.Config, error) {
	if err := o.validate(); err != nil {
		return serve.Config{}, err
	}
	cfg, err := o.Flags.Config()
	if err != nil {
		return cfg, err
	}
	cfg.Boot, cfg.Interval, cfg.Reasons = boot.ID(), o.interval, source.Reasons()
	cfg.Version, cfg.Revision, cfg.GoVersion = buildInfo()
	cfg.Processes = openKernel
	cfg.Root = os.Geteuid() == 0
	if o.wall.url == "" {
		// Without a plug, the wall is estimated from the calibration of
		// the user who ran serve: under sudo, the user who ran sudo; as
		// a LaunchDaemon, root's own (docs/serve.md).
		id, err := child.Identify(false, os.Geteuid(), s.Getenv, s.Environ())
		if err != nil {
			return cfg, err
		}
		m := findCalibration(id, readSerial)
		cfg.Calibration, cfg.CalibrationFile = m.forMac, m.file
	}
	cfg.Apps, err = o.apps.open(cfg.Root)
	return cfg, err
}
