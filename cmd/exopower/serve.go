package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"syscall"
	"time"

	"github.com/prometheus/exporter-toolkit/web"
	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v2"

	"github.com/exopower/exopower/internal/cli"
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
otherwise, which then needs a web config with passwords (--web.config.file).`,
		Example: `  sudo exopower serve
  curl -s localhost:10241/metrics | grep exopower_soc_energy
  id=$(curl -s -X POST localhost:10241/v1/spans | jq -r .id); make; curl -s -X POST localhost:10241/v1/spans/$id/end
  sudo exopower serve --listen :10241 --web.config.file web.yml`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runServe(c.Context(), s, &o) },
	}
	o.addFlags(c, time.Second)
	c.Flags().StringVar(&o.listen, "listen", wire.DefaultListen, "listen on `ADDR` (host:port); beyond loopback it needs --web.config.file with basic_auth_users")
	c.Flags().StringVar(&o.node, "node-name", "", "the name of this machine in status and spans (default: the hostname)")
	c.Flags().StringVar(&o.webConfig, "web.config.file", "", "a Prometheus web config `FILE`: TLS and basic auth, as exporters take it")
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
	startCtx, stopStart := cli.CancelOnSignal(ctx, s.Signals)
	opts := o.sourceOptions(s.Getenv, "exopower serve")
	opts.Grace = serveGrace
	meter, sup, err := source.Supervised(startCtx, opts)
	stopStart()
	if err != nil {
		return err
	}
	defer meter.Stop()
	srv := serve.New(meter, sup, cfg)
	hs := &http.Server{
		Handler:           srv.Handler(),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		// The end of a span waits up to an interval and the grace.
		WriteTimeout:   o.interval + serveGrace + 10*time.Second,
		IdleTimeout:    2 * time.Minute,
		MaxHeaderBytes: 16 << 10,
	}
	served := make(chan error, 1)
	go func() {
		logger := slog.New(slog.NewTextHandler(s.Err, &slog.HandlerOptions{Level: slog.LevelWarn}))
		served <- web.Serve(ln, hs, &web.FlagConfig{WebConfigFile: &o.webConfig}, logger)
	}()
	expiry, stopExpiry := context.WithCancel(ctx)
	defer stopExpiry()
	go srv.RunExpiry(expiry)
	fmt.Fprintf(s.Err, "exopower serve: node %s, listening on %s (GET /metrics, GET /v1/status, POST /v1/spans)\n", cfg.Node, scheme(o.webConfig)+ln.Addr().String())
	select {
	case <-s.Signals:
	case err = <-served:
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	hs.Shutdown(shutdown)
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return cli.Fail(fmt.Errorf("serve: %w", err))
	}
	return nil
}

// config checks the flags and says what the server publishes.
func (o *serveOptions) config() (serve.Config, error) {
	if err := o.validate(); err != nil {
		return serve.Config{}, err
	}
	users, err := webUsers(o.webConfig)
	if err != nil {
		return serve.Config{}, cli.Fail(fmt.Errorf("--web.config.file %s: %w", o.webConfig, err), "see https://prometheus.io/docs/prometheus/latest/configuration/https/ for the format")
	}
	host, _, err := net.SplitHostPort(o.listen)
	if err != nil {
		return serve.Config{}, cli.Fail(fmt.Errorf("--listen %s: %w", o.listen, err), "give host:port, such as "+wire.DefaultListen)
	}
	if ip := net.ParseIP(host); (ip == nil || !ip.IsLoopback()) && host != "localhost" && users == 0 {
		return serve.Config{}, cli.Fail(fmt.Errorf("--listen %s reaches beyond this machine, and no web config sets passwords", o.listen),
			"give --web.config.file with basic_auth_users (and TLS), or listen on 127.0.0.1")
	}
	node := o.node
	if node == "" {
		if node, err = os.Hostname(); err != nil {
			return serve.Config{}, cli.Fail(fmt.Errorf("no --node-name, and the hostname: %w", err), "give --node-name")
		}
	}
	cfg := serve.Config{Node: node, Interval: o.interval, Reasons: source.Reasons(), Authenticated: users > 0}
	cfg.Version, cfg.Revision, cfg.GoVersion = buildInfo()
	return cfg, nil
}

// webUsers checks a web config file as exporters do, and counts the users
// it lets in with a password.
func webUsers(path string) (int, error) {
	if path == "" {
		return 0, nil
	}
	if err := web.Validate(path); err != nil {
		return 0, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	var c struct {
		Users map[string]string `yaml:"basic_auth_users"`
	}
	if err := yaml.Unmarshal(b, &c); err != nil {
		return 0, err
	}
	return len(c.Users), nil
}

func scheme(webConfig string) string {
	if webConfig != "" {
		return "" // TLS or not, the web config says
	}
	return "http://"
}
