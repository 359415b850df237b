package serve

import (
	"slices"
	"time"

	"github.com/exopower/exopower/internal/power"
	"github.com/exopower/exopower/internal/sampler"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// components are the parts of the SoC, by their label.
var components = []string{"cpu", "gpu", "ane"}

// collector reads the stream's totals at each scrape: the counters are
// the ledger's own sums, which only grow, so increase() over any range is
// the energy of that range, whatever the scrape interval.
type collector struct {
	s                                       *Server
	energy, socEnergy, power, socPower      *prometheus.Desc
	systemEnergy, systemPower               *prometheus.Desc
	dramEnergy, dramPower                   *prometheus.Desc
	covered, samples, errors, restarts      *prometheus.Desc
	lastSample, sourceInfo, buildInfo, open *prometheus.Desc
	streams                                 *prometheus.Desc
	railRefused, railGlitches, railStill    *prometheus.Desc
}

func newRegistry(s *Server) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(newCollector(s),
		// Not the MemStats set: its go_memstats_alloc_bytes and _total are two families of one name in OpenMetrics (client_golang#829).
		collectors.NewGoCollector(collectors.WithGoCollectorMemStatsMetricsDisabled(), collectors.WithGoCollectorRuntimeMetrics(collectors.MetricsMemory)),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if s.cfg.Wall != nil {
		reg.MustRegister(newWallCollector(s))
	}
	if s.est != nil {
		reg.MustRegister(newEstimatedCollector(s))
	}
	return reg
}

func newCollector(s *Server) *collector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("exopower_"+name, help, labels, nil)
	}
	return &collector{
		s:            s,
		energy:       d("energy_joules_total", "Energy of one part of the SoC since exopower serve started, in joules (the source's windows, integrated).", "component"),
		socEnergy:    d("soc_energy_joules_total", "Energy of the whole SoC (CPU + GPU + ANE) since exopower serve started, in joules: a metric of its own, so that sum() over exopower_energy_joules_total never counts it twice."),
		power:        d("power_watts", "Average power of one part of the SoC over the last window, in watts (where a batch of counters landed in it, the batch's power over the time it accrued).", "component"),
		socPower:     d("soc_power_watts", "Average power of the whole SoC over the last window, in watts."),
		systemEnergy: d("system_energy_joules_total", "Energy of the whole Mac as its SMC reports it (PSTR) since exopower serve started, in joules: SoC, memory, display, storage and the rest; only where the source reads the SMC (ioreport)."),
		systemPower:  d("system_power_watts", "Average power of the whole Mac as its SMC reports it over the last window, in watts; only where the source reads the SMC."),
		dramEnergy:   d("dram_energy_joules_total", "Energy of the memory (DRAM) since exopower serve started, in joules: beside the SoC's, not a part of it; only where the source reads it (ioreport)."),
		dramPower:    d("dram_power_watts", "Average power of the memory (DRAM) over the last window, in watts; only where the source reads it."),
		covered:      d("covered_seconds_total", "Time covered by measured windows, in seconds: its increase() over a range, divided by the range, is the coverage."),
		samples:      d("samples_total", "Windows measured."),
		errors:       d("sample_errors_total", "Readings of the source (powermetrics's documents) that could not be used, by reason.", "reason"),
		restarts:     d("source_restarts_total", "Times the source was started again after it ended (powermetrics exited, or IOReport's counters went back)."),
		lastSample:   d("last_sample_timestamp_seconds", "When the last window's document arrived, in seconds since the Unix epoch."),
		sourceInfo:   d("source_info", "Where the numbers come from; always 1.", "tool", "hw_model", "os_build"),
		buildInfo:    d("build_info", "The exopower build; always 1.", "version", "revision", "goversion"),
		open:         d("open_spans", "Spans open now, not counting the streams of windows."),
		streams:      d("open_streams", "Streams of windows (GET /v1/windows) open now: each holds a span, and open_spans + open_streams may reach 1024 at most."),
		railRefused:  d("rail_refused_windows_total", "Windows refused because a rail's power in them could not be true (beyond what the Mac can draw, or negative), by rail: the window never enters any counter.", "component"),
		railGlitches: d("rail_glitches_total", "Readings of a rail's energy counter dropped as bogus (a lone 0, a step and back), by rail: the energy across each is taken from the readings on either side.", "component"),
		railStill:    d("rail_still_seconds", "How long a rail's energy counter has stood still now while the others moved, in seconds (0 while it moves), by rail: the CPU's and the memory's, which draw whenever the Mac is on; past 3 s it is stuck.", "component"),
	}
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.energy, c.socEnergy, c.power, c.socPower, c.systemEnergy, c.systemPower, c.dramEnergy, c.dramPower, c.covered, c.samples,
		c.errors, c.restarts, c.lastSample, c.sourceInfo, c.buildInfo, c.open, c.streams, c.railRefused, c.railGlitches, c.railStill} {
		ch <- d
	}
	c.s.describeApps(ch)
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	// With --apps, the totals of the apps' last round: the apps' counters
	// add up to these.
	t, perApp := c.s.scrapeTotals()
	c.s.collectApps(ch, perApp)
	restarts, _ := c.s.src.Restarts()
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	// The memory's and the system's only where the source reports them:
	// a 0 that was never measured would read as a Mac that drew nothing.
	// Each is a metric of its own, so that sum() over the components
	// stays the SoC's.
	for i, v := range []float64{t.Energy.CPU, t.Energy.GPU, t.Energy.ANE} {
		counter(c.energy, v, components[i])
	}
	counter(c.socEnergy, t.Energy.Total)
	if t.Has.DRAM {
		counter(c.dramEnergy, t.Energy.DRAM)
	}
	if t.Has.System {
		counter(c.systemEnergy, t.Energy.System)
	}
	if t.Windows > 0 {
		gauge(c.lastSample, float64(t.LastArrival.UnixNano())/1e9)
	}
	c.collectPower(ch, &t)
	counter(c.covered, t.Covered.Seconds())
	counter(c.samples, float64(t.Windows))
	for _, r := range c.s.cfg.Reasons {
		counter(c.errors, float64(t.Refused[r]), r)
	}
	counter(c.restarts, float64(restarts))
	c.collectRails(ch, &t)
	gauge(c.sourceInfo, 1, t.Source, t.HWModel, t.OSBuild)
	gauge(c.buildInfo, 1, c.s.cfg.Version, c.s.cfg.Revision, c.s.cfg.GoVersion)
	c.s.mu.Lock()
	open, streams := len(c.s.spans), c.s.streams
	c.s.mu.Unlock()
	gauge(c.open, float64(open))
	gauge(c.streams, float64(streams))
}

// collectPower gives the power now, where there is a power to tell.
func (c *collector) collectPower(ch chan<- prometheus.Metric, t *sampler.StreamTotals) {
	// Before the first window there is no power to tell, and once the
	// source has been silent past the stale bound the last power is not
	// now's: no gauge rather than a value that was never measured, or is
	// long gone (Prometheus marks the series stale).
	if t.Windows == 0 || c.s.cfg.Now().Sub(t.LastArrival) > c.s.stale() {
		return
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	// The window's power as a power now: a batch of counters that landed
	// in it at its power over the time it accrued, not over the window
	// alone.
	p := t.Last.Peak
	for i, v := range []float64{p.CPU, p.GPU, p.ANE} {
		gauge(c.power, v, components[i])
	}
	gauge(c.socPower, p.Total)
	if t.Has.DRAM {
		gauge(c.dramPower, p.DRAM)
	}
	if t.Has.System {
		gauge(c.systemPower, p.System)
	}
}

// collectRails gives each rail's health, where the source reports the
// rail: a rail going bad on a new macOS shows on the dashboard before
// anyone reads a warning.
func (c *collector) collectRails(ch chan<- prometheus.Metric, t *sampler.StreamTotals) {
	for r := range power.NumRails {
		if !t.Has.Has(r) {
			continue
		}
		ch <- prometheus.MustNewConstMetric(c.railRefused, prometheus.CounterValue, float64(t.Health[r].Refused), r.Label())
		ch <- prometheus.MustNewConstMetric(c.railGlitches, prometheus.CounterValue, float64(t.Health[r].Glitches), r.Label())
		if slices.Contains(power.HabitRails, r) {
			ch <- prometheus.MustNewConstMetric(c.railStill, prometheus.GaugeValue, t.Stood[r].Seconds(), r.Label())
		}
	}
}

// stale is how long after its last window the power gauges still tell the
// power: as long as a source may go silent before it is taken for hung
// and started again (5 s and two intervals).
func (s *Server) stale() time.Duration { return 5*time.Second + 2*s.cfg.Interval }
