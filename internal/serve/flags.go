package serve

import (
	"fmt"
	"math"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/sampler"
	"github.com/exopower/exopower/internal/wire"
)

// Flags are exopower serve's own flags, as the command line gave them.
type Flags struct {
	// Listen is the address to listen on, host:port; Node names this
	// machine ("": its hostname).
	Listen, Node string
	// WebConfig is the Prometheus web config file ("": none).
	WebConfig string
	// MaxConns is the most connections held at once.
	MaxConns int
}

// Config checks f and says what the server publishes; Boot, Interval,
// Reasons and the version are the caller's to add.
func (f Flags) Config() (Config, error) {
	if f.MaxConns < 1 {
		return Config{}, cli.Fail(fmt.Errorf("--web.max-connections %d: serve needs at least one connection", f.MaxConns), fmt.Sprintf("the default is %d, as Prometheus's", DefaultMaxConnections))
	}
	web, err := LoadWebConfig(f.WebConfig)
	if err != nil {
		return Config{}, cli.Fail(fmt.Errorf("--web.config.file %s: %w", f.WebConfig, err), "see https://prometheus.io/docs/prometheus/latest/configuration/https/ for the format")
	}
	host, _, err := net.SplitHostPort(f.Listen)
	if err != nil {
		return Config{}, cli.Fail(fmt.Errorf("--listen %s: %w", f.Listen, err), "give host:port, such as "+wire.DefaultListen)
	}
	ip := net.ParseIP(host)
	beyond := (ip == nil || !ip.IsLoopback()) && host != "localhost"
	if beyond && web.Users() == 0 {
		return Config{}, cli.Fail(fmt.Errorf("--listen %s reaches beyond this machine, and no web config sets passwords", f.Listen),
			"give --web.config.file with basic_auth_users (and TLS), or listen on 127.0.0.1")
	}
	hostname, herr := os.Hostname()
	node := f.Node
	if node == "" {
		if herr != nil {
			return Config{}, cli.Fail(fmt.Errorf("no --node-name, and the hostname: %w", herr), "give --node-name")
		}
		node = hostname
	}
	cfg := Config{Node: node, Web: web, BeyondLoopback: beyond}
	if herr == nil {
		cfg.Hostnames = []string{hostname}
	}
	return cfg, nil
}

// ClosingLine is what serve says as it stops: why, after how long, what
// it answered, what it measured, and the spans that clients left open,
// which get no end now.
func ClosingLine(sig os.Signal, sv Served, t sampler.StreamTotals, up time.Duration) string {
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

// OpenFiles is how many files this process may open (the soft
// RLIMIT_NOFILE, which Go raised to the hard one at start), or the most
// there can be when it cannot tell.
func OpenFiles() uint64 {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return math.MaxUint64
	}
	return uint64(rl.Cur)
}

// Scheme is the scheme of serve's URL: https:// when the web config that
// its start checked sets TLS, which serve then speaks for as long as it
// runs.
func (w *WebConfig) Scheme() string {
	if w.TLS() {
		return "https://"
	}
	return "http://"
}
