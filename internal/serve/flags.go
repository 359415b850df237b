package serve

import (
	"fmt"
	"math"
	"net"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/safe"
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
	// SpanUsers and ProcessUsers name the users of the web config with
	// the span role and the process role (--web.span-users,
	// --web.process-users): SpanUsers nil, not given, is every user.
	SpanUsers, ProcessUsers []string
	// ProcessSpansWithoutPassword is --web.process-spans-without-password.
	ProcessSpansWithoutPassword bool
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
	// The node's name is a label of every app's series, which
	// Prometheus's client refuses (with a panic, at registration)
	// where it is not UTF-8, and a line of the log and of /v1/status.
	if safe.Text(node) != node {
		return Config{}, cli.Fail(fmt.Errorf("the node's name %s holds control characters or bytes that are not UTF-8, or is too long", safe.Text(node)),
			"give --node-name, such as --node-name mac-studio-1")
	}
	for _, role := range []struct {
		flag  string
		names []string
	}{{"--web.span-users", f.SpanUsers}, {"--web.process-users", f.ProcessUsers}} {
		if err := checkRoleUsers(role.flag, role.names, web); err != nil {
			return Config{}, err
		}
	}
	cfg := Config{Node: node, Web: web, BeyondLoopback: beyond,
		SpanUsers: f.SpanUsers, ProcessUsers: f.ProcessUsers, ProcessSpansWithoutPassword: f.ProcessSpansWithoutPassword}
	if herr == nil {
		cfg.Hostnames = []string{hostname}
	}
	return cfg, nil
}

// checkRoleUsers refuses names, given to flag (nil: not given), unless
// each is a user of the web config that serve's start read. The file is
// read again at every request: a user it comes to drop gets nothing
// then, and one it adds no role that names do not give.
func checkRoleUsers(flag string, names []string, web *WebConfig) error {
	if names == nil {
		return nil
	}
	list := strings.Join(names, ",")
	if list == "" {
		list = `""`
	}
	if web.Users() == 0 {
		return cli.Fail(fmt.Errorf("%s %s: no web config sets basic_auth_users, the users that roles are for", flag, list),
			"give --web.config.file with basic_auth_users that sets them; without passwords, this machine's clients may open spans")
	}
	for _, n := range names {
		if n == "" {
			return cli.Fail(fmt.Errorf("%s %s: a user's name is empty", flag, list), "separate the names by single commas, such as alice,bob")
		}
		if !web.HasUser(n) {
			return cli.Fail(fmt.Errorf("%s %s: the web config %s sets no user %s", flag, list, web.path, n),
				fmt.Sprintf("name users of its basic_auth_users (%s), separated by commas", strings.Join(web.UserNames(), ", ")))
		}
	}
	return nil
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
	if sv.WallJoules != nil {
		energy = output.Joules(*sv.WallJoules) + " (wall), " + energy
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
