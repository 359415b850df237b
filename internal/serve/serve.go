// Package serve publishes one stream's energy over HTTP: Prometheus
// counters read from the stream's ledger, a status page, and spans that
// clients open and close, each measured as exopower run measures a
// command.
package serve

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/exopower/exopower/internal/apps"
	"github.com/exopower/exopower/internal/attrib"
	"github.com/exopower/exopower/internal/calibrate"
	"github.com/exopower/exopower/internal/sampler"
	"github.com/exopower/exopower/internal/wall"
	"github.com/exopower/exopower/internal/wire"
)

// Limits of what clients may ask.
const (
	// MaxOpenSpans bounds the spans open at once: each one costs a little
	// work at every window. One more is refused with 429.
	MaxOpenSpans = 1024
	// SpanTTL is how long a span may stay open: one left behind by a
	// client that died must not stay forever.
	SpanTTL = 24 * time.Hour
	// MaxBody bounds a request's body; no request needs one.
	MaxBody = 4 << 10
	// MaxProcessSpans bounds the spans that name a process (?pid=) open
	// at once: each reads the process list and its tree ten times a
	// second. One more is refused with 429.
	MaxProcessSpans = 16
	// MaxProcessSpansPerClient bounds the places among the
	// MaxProcessSpans that one client holds: a user of the web config,
	// or this machine's clients without a password, as one.
	MaxProcessSpansPerClient = 4
	// TreeGoneAfter is how long a span that names a process stays open
	// once its tree is gone.
	TreeGoneAfter = 10 * time.Second
)

// Meter is the stream that serve publishes: a *sampler.Sampler.
type Meter interface {
	Begin(ctx context.Context, onWindow func(sampler.Window, sampler.Totals)) *sampler.Span
	End(ctx context.Context, sp *sampler.Span, end time.Time) sampler.Result
	Read(sp *sampler.Span) sampler.Result
	Totals() sampler.StreamTotals
}

// Restarter says how often the source was started again.
type Restarter interface {
	Restarts() (int, error)
}

// Config says what a Server publishes about itself.
type Config struct {
	// Node names this machine in status and spans.
	Node string
	// Boot is this machine's boot session (boot.ID), published in the
	// status so that a client on this machine can tell that it reaches
	// its own Mac; "" where unknown.
	Boot string
	// Interval is the stream's sample interval.
	Interval time.Duration
	// Reasons are the reasons the source refuses a reading for, each
	// published as a count from the start, so that rate() over them
	// needs no first failure.
	Reasons []string
	// Web is the Prometheus web config (--web.config.file) as serve's
	// start checked it (LoadWebConfig), or nil for none. Whether serve
	// speaks TLS is its say, for as long as serve runs; the file is read
	// again at every request. While the config in force sets
	// basic_auth_users, every request needs a password, and spans are
	// served to the users whose roles allow them (SpanUsers,
	// ProcessUsers); otherwise to this machine
	// only, and only to a Host that names this machine. Once a config
	// with users has been in force, its users stay in force while the
	// file cannot be used or sets none.
	Web *WebConfig
	// BeyondLoopback says that serve listens beyond this machine: a web
	// config that sets no passwords is then a fault, and other machines
	// are refused until it sets them again.
	BeyondLoopback bool
	// Log is serve's log (its stderr): what is wrong with the web config,
	// as it is found and when it is put right. nil: none.
	Log io.Writer
	// Hostnames are this machine's names (os.Hostname's) that a request
	// without a password may give as its Host, besides localhost and the
	// loopback addresses; the .local form of each is taken too.
	Hostnames []string
	// Version, Revision and GoVersion go into exopower_build_info.
	Version, Revision, GoVersion string
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Processes opens the kernel's accounting of processes, for spans
	// that name a process (?pid=); nil: such spans are refused.
	Processes func() (attrib.Kernel, error)
	// Root says that serve runs as root (euid 0), and so may read any
	// user's processes.
	Root bool
	// SpanUsers are the users of the web config who may open, read and
	// end spans and stream the windows (the span role); nil: every
	// user, and an empty list: none. Every user may scrape (/metrics,
	// /v1/status).
	SpanUsers []string
	// ProcessUsers are the users of the web config who may also open
	// spans that name a process (?pid=, the process role); they have the
	// span role too.
	ProcessUsers []string
	// ProcessSpansWithoutPassword lets this machine's clients without a
	// password open spans that name a process while serve runs as root,
	// which cannot tell which user of the Mac asks: for a Mac of one
	// user. Without root they may, as the kernel lets serve read only
	// its own user's processes.
	ProcessSpansWithoutPassword bool
	// Wall is the metered plug of --wall, polled for as long as serve
	// runs; nil: none. Its energy is published as counters of its own
	// and is every span's wall figure.
	Wall *wall.Session
	// Calibration holds this Mac's calibration (exopower calibrate) to
	// the Mac of model, as the source names it, whose source reads the
	// system's power where hasSystem: the calibration where it is that
	// Mac's and fits the source, else nil and why not ("" where there is
	// none at all). serve asks once, at the stream's first window, and
	// estimates the wall from the answer for as long as it runs: its
	// counter, and every span's wall_estimated. nil, or with Wall: no
	// estimate.
	Calibration func(model string, hasSystem bool) (*calibrate.Calibration, string)
	// CalibrationFile is where the calibration is looked for, for the
	// status; "" where the user has no configuration directory.
	CalibrationFile string
	// Apps is --apps, every app's energy as counters (apps.go); nil:
	// none.
	Apps *Apps
}

// Server answers the HTTP API over one Meter.
type Server struct {
	meter   Meter
	src     Restarter
	cfg     Config
	started time.Time
	reg     *prometheus.Registry
	web     *webConfig
	hosts   map[string]bool // this machine's names: Config.Hostnames
	cop     *http.CrossOriginProtection
	est     *estimator // the wall estimated from this Mac's calibration; nil: none

	// instance tells this serve from every other, however it is
	// reached: drawn at its start.
	instance string

	apps *appsState // --apps; nil without it

	mu      sync.Mutex
	spans   map[string]*openSpan
	pending int            // spans being opened: counted against MaxOpenSpans
	trees   int            // spans that follow a process, open or being opened: counted against MaxProcessSpans
	treesBy map[string]int // trees by client (client.key): counted against MaxProcessSpansPerClient
	streams int            // streams of windows, each holding a span: counted too

	// What serve answered, for the line it ends with (Served).
	requests, opened, ended atomic.Int64
}

// Served is what a Server answered since it started.
type Served struct {
	// Requests counts the requests answered past the checks of
	// passwords and Host (gate), whatever the answer.
	Requests int64
	// Opened and Ended count the spans that clients opened and ended;
	// Open is how many are open now (those that expired are neither).
	Opened, Ended int64
	Open          int
	// WallJoules is the energy at the wall since serve started, where it
	// reads a plug (--wall).
	WallJoules *float64
}

// Served returns what s answered since it started.
func (s *Server) Served() Served {
	s.mu.Lock()
	open := len(s.spans)
	s.mu.Unlock()
	sv := Served{Requests: s.requests.Load(), Opened: s.opened.Load(), Ended: s.ended.Load(), Open: open}
	if s.cfg.Wall != nil {
		j := s.cfg.Wall.Total().Joules
		sv.WallJoules = &j
	}
	return sv
}

type openSpan struct {
	id      string
	span    *sampler.Span
	started time.Time  // wall clock, for people and other machines
	tree    *tree      // the process tree the span names, or nil
	app     *apps.Span // the app the span names, or nil

	// mu is held while the span is read or ended, so that its end,
	// by its client, by Reclaim or by Expire, comes once.
	mu sync.Mutex
	// final is the span's reading where serve ended it for its client,
	// its tree gone (Reclaim): the answer to GET and end from then on.
	final *wire.Reading
}

// New returns a Server over meter, whose source src is.
func New(meter Meter, src Restarter, cfg Config) *Server {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Server{meter: meter, src: src, cfg: cfg, started: cfg.Now(), instance: randomHex(16), spans: map[string]*openSpan{}, treesBy: map[string]int{},
		web:   newWebConfig(cfg.Web, cfg.BeyondLoopback, cfg.Log),
		hosts: hostnames(cfg.Hostnames),
		cop:   http.NewCrossOriginProtection(),
		est:   newEstimator(cfg),
	}
	s.apps = newAppsState(cfg.Apps, cfg.Node, s.logLine)
	s.reg = newRegistry(s)
	return s
}

// Expire closes the spans that have been open longer than SpanTTL, so
// that the stream stops noting windows for them. Run it now and then.
func (s *Server) Expire() int {
	cutoff := s.cfg.Now().Add(-SpanTTL)
	s.mu.Lock()
	var old []*openSpan
	for id, o := range s.spans {
		if o.started.Before(cutoff) {
			old = append(old, o)
			delete(s.spans, id)
		}
	}
	s.mu.Unlock()
	for _, o := range old {
		s.drop(o)
	}
	return len(old)
}

// drop ends o, taken out of s.spans, for no one: no window is waited for,
// and its tree is read no more.
func (s *Server) drop(o *openSpan) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.final != nil {
		return // ended already, its tree stopped
	}
	ctx, cancel := contextDone()
	defer cancel()
	s.meter.End(ctx, o.span, s.cfg.Now())
	o.tree.stop()
	s.closeApp(o.app)
}

// Reclaim ends the spans that name a process whose tree has been gone
// for TreeGoneAfter, as their clients would: each is read no more and
// gives its place among the MaxProcessSpans back, and its reading, as
// of its end, answers GET and end until it expires. It returns how many
// it ended. Run it every second.
func (s *Server) Reclaim() int {
	now := s.cfg.Now()
	s.mu.Lock()
	var trees []*openSpan
	for _, o := range s.spans {
		if o.tree != nil {
			trees = append(trees, o)
		}
	}
	s.mu.Unlock()
	n := 0
	for _, o := range trees {
		if o.tree.goneFor(now) >= TreeGoneAfter && s.finish(o) {
			n++
		}
	}
	return n
}

// finish ends o, whose tree is gone, at the end of the newest window (no
// wait for one), and keeps its reading for its client. It reports false
// where o was ended already, or is being read or ended: the next
// Reclaim tries again.
func (s *Server) finish(o *openSpan) bool {
	if !o.mu.TryLock() {
		return false
	}
	defer o.mu.Unlock()
	s.mu.Lock()
	kept := s.spans[o.id] == o
	s.mu.Unlock()
	if !kept || o.final != nil {
		return false
	}
	end := s.cfg.Now()
	if t := s.meter.Totals(); t.Windows > 0 && t.Last.End.After(o.span.Start) && t.Last.End.Before(end) {
		end = t.Last.End
	}
	ctx, cancel := contextDone()
	defer cancel()
	r := s.reading(ctx, o, s.meter.End(ctx, o.span, end), &end)
	r.Warnings = append(r.Warnings, fmt.Sprintf("the span's processes were all gone for %v: serve ended the span then, and gave its place back", TreeGoneAfter))
	o.final = &r
	return true
}

// RunExpiry ends spans left behind until ctx ends: those whose process
// tree is gone (Reclaim, every second), and those open for SpanTTL
// (Expire, every minute).
func (s *Server) RunExpiry(ctx context.Context) {
	reclaim, expire := time.NewTicker(time.Second), time.NewTicker(time.Minute)
	defer reclaim.Stop()
	defer expire.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-reclaim.C:
			s.Reclaim()
		case <-expire.C:
			s.Expire()
		}
	}
}

func newID() string { return randomHex(12) }

// randomHex is n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// loopback reports whether the request came from this machine.
func loopback(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// contextDone is a context that has ended: for closing a span whose
// result nobody reads, with no wait for a window.
func contextDone() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx, cancel
}
