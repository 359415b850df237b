package serve

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/exopower/exopower/internal/apps"
	"github.com/exopower/exopower/internal/sampler"
)

// Apps is --apps: every app's energy as counters of its own, read from
// the whole process table once per window (internal/apps).
type Apps struct {
	// Poller reads the processes; it is serve's from StartApps on.
	Poller *apps.Poller
	// Top is how many apps have series of their own (--apps.top); the
	// others are summed as app="other".
	Top int
	// Kernel is the Poller's accounting of processes, closed when
	// RunApps ends.
	Kernel io.Closer
	// Whose says whose processes the Poller reads, for serve's log.
	Whose string
}

// appsState is what serve keeps of --apps. The Poller is read from one
// goroutine (RunApps); what a scrape reads is kept under mu, as of the
// poller's last round: the apps' series and the stream's totals of that
// same moment, so that at every scrape the apps and the remainder add up
// to the node's counters.
type appsState struct {
	cfg    Apps
	energy *prometheus.Desc
	rest   *prometheus.Desc
	procs  *prometheus.Desc
	log    func(string)

	mu      sync.Mutex
	started bool
	series  *apps.Series
	totals  sampler.StreamTotals
	counts  apps.Counts
	failed  bool // a round failed already: said once

	// The spans that name an app (appspan.go). pmu is held while the
	// Poller reads (StartApps, a round and its spans' update) and while
	// a span of an app is opened, read or ended: the Poller is read by
	// one goroutine at a time.
	pmu     sync.Mutex
	ready   bool   // StartApps read the processes
	failure string // why StartApps could not, or ""
	spans   map[*apps.Span]bool
	read    int           // the windows that the last round read
	tick    chan struct{} // closed after each round, and made again
	waiting int           // ends of spans waiting for a round
	stopped chan struct{} // closed once no round will come (RunApps ended)
}

func newAppsState(cfg *Apps, node string, log func(string)) *appsState {
	if cfg == nil {
		return nil
	}
	// A constant label of the node, as Kepler's node_name.
	node1 := prometheus.Labels{"node_name": node}
	return &appsState{
		cfg: *cfg, log: log, spans: map[*apps.Span]bool{}, tick: make(chan struct{}), stopped: make(chan struct{}),
		energy: prometheus.NewDesc("exopower_app_energy_joules_total", "Energy of one app's processes since exopower serve started counting it, in joules, "+
			"by component: cpu as the kernel measured it, gpu by its share of the GPU's time; the app other is every app without a series of its own (serve --apps).",
			[]string{"app", "component"}, node1),
		rest: prometheus.NewDesc("exopower_app_remainder_energy_joules_total", "Energy of the CPU and the GPU that no app's series holds, in joules: "+
			"part unattributed, what no process read holds (the kernel's own, idle cores, other users' processes without root, processes between two reads, and all before serve's first read); "+
			"part dropped, the series of apps gone long enough to be dropped. With exopower_app_energy_joules_total it adds up to exopower_energy_joules_total.",
			[]string{"component", "part"}, node1),
		procs: prometheus.NewDesc("exopower_app_processes", "Processes of the last read of the process table: state read, whose energy was read, "+
			"and not_readable, another user's, whose CPU energy is in the remainder (0 as root).", []string{"state"}, node1),
	}
}

// StartApps reads every process once, where each counts from. Until it
// has, a scrape has no app's counter and the stream's totals as they
// are; from then on, the totals of the Poller's last round. Both are
// read under one lock, so that the totals a scrape gives never go back.
// Without --apps it does nothing.
func (s *Server) StartApps() error {
	a := s.apps
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.pmu.Lock()
	defer a.pmu.Unlock()
	t := s.meter.Totals()
	at := t.Last.End // on the windows' timeline, as the rounds' readings
	if t.Windows == 0 {
		at = s.cfg.Now()
	}
	if err := a.cfg.Poller.Start(apps.Reading{At: at, Energy: t.Energy, Has: t.Has}); err != nil {
		a.failure = err.Error()
		return fmt.Errorf("--apps: reading the processes: %w", err)
	}
	a.series, a.totals, a.started = apps.NewSeries(a.cfg.Top, t.Energy), t, true
	a.ready, a.read = true, t.Windows
	return nil
}

// RunApps starts --apps (StartApps) and reads the process table at each
// window until ctx ends; it closes the Poller's kernel then. Without
// --apps it returns at once.
func (s *Server) RunApps(ctx context.Context) {
	a := s.apps
	if a == nil {
		return
	}
	if a.cfg.Kernel != nil {
		defer a.cfg.Kernel.Close()
	}
	// No round comes after this: the ends of spans that wait for one
	// take what there is.
	defer close(a.stopped)
	if err := s.StartApps(); err != nil {
		a.log("exopower serve: " + err.Error() + ": serving no app's counter")
		return
	}
	a.log("exopower serve: --apps: " + a.cfg.Whose)
	// A wake-up, not a window: each round reads the stream's totals as
	// they are, and a wake-up missed while a round runs is the next
	// round's.
	wake := make(chan struct{}, 1)
	sp := s.meter.Begin(ctx, func(sampler.Window, sampler.Totals) {
		select {
		case wake <- struct{}{}:
		default:
		}
	})
	defer func() {
		done, cancel := contextDone()
		defer cancel()
		s.meter.End(done, sp, s.cfg.Now())
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case <-wake:
			s.appsRound()
		}
	}
}

// appsRound reads the process table once, over the windows since the
// last round.
func (s *Server) appsRound() {
	a := s.apps
	t := s.meter.Totals()
	if t.Windows == a.totals.Windows {
		return
	}
	err := a.roundOfSpans(t)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.series.Add(a.cfg.Poller, t.Last.End.Sub(a.totals.Last.End))
	a.totals, a.counts = t, a.cfg.Poller.Counts()
	if err != nil && !a.failed {
		a.failed = true
		a.log("exopower serve: --apps: " + err.Error() + ": the energy of the windows it could not read is in the remainder (said once)")
	}
}

// appsScrape is what a scrape reads of --apps.
type appsScrape struct {
	series             []appSeries
	unattributed, drop apps.Figures
	counts             apps.Counts
}

type appSeries struct {
	app    string
	energy apps.Figures
}

// scrapeTotals is the stream's totals for a scrape: with --apps, those
// of the poller's last round, with the apps' series of that moment.
func (s *Server) scrapeTotals() (sampler.StreamTotals, *appsScrape) {
	a := s.apps
	if a == nil {
		return s.meter.Totals(), nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.started {
		return s.meter.Totals(), nil
	}
	sc := &appsScrape{counts: a.counts}
	a.series.Each(func(app string, e apps.Figures) { sc.series = append(sc.series, appSeries{app, e}) })
	sc.unattributed, sc.drop = a.series.Remainder()
	return a.totals, sc
}

func (s *Server) describeApps(ch chan<- *prometheus.Desc) {
	if a := s.apps; a != nil {
		ch <- a.energy
		ch <- a.rest
		ch <- a.procs
	}
}

// collectApps gives the apps' counters of a scrape; nothing without
// --apps.
func (s *Server) collectApps(ch chan<- prometheus.Metric, sc *appsScrape) {
	if sc == nil {
		return
	}
	a := s.apps
	metric := func(d *prometheus.Desc, kind prometheus.ValueType, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, kind, v, labels...)
	}
	for _, e := range sc.series {
		metric(a.energy, prometheus.CounterValue, e.energy.CPU, e.app, "cpu")
		metric(a.energy, prometheus.CounterValue, e.energy.GPU, e.app, "gpu")
	}
	for _, p := range []struct {
		part string
		f    apps.Figures
	}{{"unattributed", sc.unattributed}, {"dropped", sc.drop}} {
		metric(a.rest, prometheus.CounterValue, p.f.CPU, "cpu", p.part)
		metric(a.rest, prometheus.CounterValue, p.f.GPU, "gpu", p.part)
	}
	metric(a.procs, prometheus.GaugeValue, float64(sc.counts.Read), "read")
	metric(a.procs, prometheus.GaugeValue, float64(sc.counts.NotReadable), "not_readable")
}

// logLine writes line to serve's log, where it has one.
func (s *Server) logLine(line string) {
	if s.cfg.Log != nil {
		fmt.Fprintln(s.cfg.Log, line)
	}
}
