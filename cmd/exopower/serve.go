package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/exopower/exopower/internal/boot"
	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/cli/usage"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/sampler"
	"github.com/exopower/exopower/internal/serve"
	"github.com/exopower/exopower/internal/source"
	"github.com/exopower/exopower/internal/wire"
)

// serveGrace is how long past one interval the end of a span waits for the
// window that covers it.
const serveGrace = time.Second

type serveOptions struct {
	commonOptions
	listen    string
	node      string
	webConfig string
	maxConns  int
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
machine's hostname; web pages of other origins may not open spans or streams.`,
		Example: `  sudo exopower serve
  curl -s localhost:10241/metrics | grep exopower_soc_energy
  id=$(curl -s -X POST localhost:10241/v1/spans | jq -r .id); make; curl -s -X POST localhost:10241/v1/spans/$id/end
  sudo exopower serve --listen :10241 --web.config.file web.yml`,
		Args: usage.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runServe(c.Context(), s, &o) },
	}
	o.addFlags(c, time.Second)
	c.Flags().StringVar(&o.listen, "listen", wire.DefaultListen, "listen on `ADDR` (host:port); beyond loopback it needs --web.config.file with basic_auth_users")
	c.Flags().StringVar(&o.node, "node-name", "", "the name of this machine in status and spans (default: the hostname)")
	c.Flags().StringVar(&o.webConfig, "web.config.file", "", "a Prometheus web config `FILE`: TLS and basic auth, as exporters take it; read again at every request, but TLS is turned on or off only at start")
	c.Flags().IntVar(&o.maxConns, "web.max-connections", serve.DefaultMaxConnections, "hold at most `N` connections at once (the next waits), and never more than half of the files exopower may open (ulimit -n)")
	return c
}

func runServe(ctx context.Context, s *cli.Streams, o *serveOptions) error {
	cfg, err := o.config()
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		hint := "give an address of this machine and a port from 1 to 65535, such as " + wire.DefaultListen
		if errors.Is(err, syscall.EADDRINUSE) {
			hint = "is another exopower serve running? choose another address with --listen"
		}
		return cli.Fail(fmt.Errorf("--listen %s: %w", o.listen, err), hint)
	}
	defer ln.Close()
	started := time.Now()
	startCtx, stopStart := cli.CancelOnSignal(ctx, s.Signals)
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
	nofile := openFiles()
	maxConns, lowered := serve.MaxConnections(o.maxConns, nofile)
	if lowered {
		fmt.Fprintf(s.Err, "exopower serve: --web.max-connections %d lowered to %d, half of the %d files exopower may open (ulimit -n): the rest are kept for the source and serve's own files\n",
			o.maxConns, maxConns, nofile)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(hs, serve.Listen(ln, maxConns)) }()
	expiry, stopExpiry := context.WithCancel(ctx)
	defer stopExpiry()
	go srv.RunExpiry(expiry)
	fmt.Fprintf(s.Err, "exopower serve: node %s, listening on %s (GET /metrics, GET /v1/status, POST /v1/spans)\n", cfg.Node, scheme(cfg.Web)+ln.Addr().String())
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
	fmt.Fprintln(s.Err, closingLine(stopped, srv.Served(), meter.Totals(), time.Since(started)))
	return nil
}

// closingLine is what serve says as it stops: why, after how long, what
// it answered, what it measured, and the spans that clients left open,
// which get no end now.
func closingLine(sig os.Signal, sv serve.Served, t sampler.StreamTotals, up time.Duration) string {
	line := "exopower serve: stopped"
	if sig != nil {
		line += " (" + sig.String() + ")"
	}
	line += fmt.Sprintf(" after %v: answered %s, %s opened and %d ended",
		up.Round(100*time.Millisecond), output.Count(int(sv.Requests), "request"), output.Count(int(sv.Opened), "span"), sv.Ended)
	switch {
	case sv.Open == 1:
		line += " (1 still open, which its client can no longer end)"
	case sv.Open > 1:
		line += fmt.Sprintf(" (%d still open, which their clients can no longer end)", sv.Open)
	}
	energy := output.Joules(t.Energy.Total) + " (SoC)"
	if t.Has.System {
		energy = output.Joules(t.Energy.System) + " (system), " + energy
	}
	return line + fmt.Sprintf("; measured %s over %v in %s", energy, t.Covered.Round(100*time.Millisecond), output.Count(t.Windows, "window"))
}

// config checks the flags and says what the server publishes.
func (o *serveOptions) config() (serve.Config, error) {
	if err := o.validate(); err != nil {
		return serve.Config{}, err
	}
	if o.maxConns < 1 {
		return serve.Config{}, cli.Fail(fmt.Errorf("--web.max-connections %d: serve needs at least one connection", o.maxConns), fmt.Sprintf("the default is %d, as Prometheus's", serve.DefaultMaxConnections))
	}
	web, err := serve.LoadWebConfig(o.webConfig)
	if err != nil {
		return serve.Config{}, cli.Fail(fmt.Errorf("--web.config.file %s: %w", o.webConfig, err), "see https://prometheus.io/docs/prometheus/latest/configuration/https/ for the format")
	}
	host, _, err := net.SplitHostPort(o.listen)
	if err != nil {
		return serve.Config{}, cli.Fail(fmt.Errorf("--listen %s: %w", o.listen, err), "give host:port, such as "+wire.DefaultListen)
	}
	ip := net.ParseIP(host)
	beyond := (ip == nil || !ip.IsLoopback()) && host != "localhost"
	if beyond && web.Users() == 0 {
		return serve.Config{}, cli.Fail(fmt.Errorf("--listen %s reaches beyond this machine, and no web config sets passwords", o.listen),
			"give --web.config.file with basic_auth_users (and TLS), or listen on 127.0.0.1")
	}
	hostname, herr := os.Hostname()
	node := o.node
	if node == "" {
		if herr != nil {
			return serve.Config{}, cli.Fail(fmt.Errorf("no --node-name, and the hostname: %w", herr), "give --node-name")
		}
		node = hostname
	}
	cfg := serve.Config{Node: node, Boot: boot.ID(), Interval: o.interval, Reasons: source.Reasons(), Web: web, BeyondLoopback: beyond}
	if herr == nil {
		cfg.Hostnames = []string{hostname}
	}
	cfg.Version, cfg.Revision, cfg.GoVersion = buildInfo()
	return cfg, nil
}

// openFiles is how many files this process may open (the soft
// RLIMIT_NOFILE, which Go raised to the hard one at start), or the most
// there can be when it cannot tell.
func openFiles() uint64 {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return math.MaxUint64
	}
	return uint64(rl.Cur)
}

// scheme is the scheme of serve's URL: https:// when the web config that
// its start checked sets TLS, which serve then speaks for as long as it
// runs.
func scheme(web *serve.WebConfig) string {
	if web.TLS() {
		return "https://"
	}
	return "http://"
}
