package serve

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/apps"
	"github.com/exopower/exopower/internal/fakepm"
	"github.com/exopower/exopower/internal/power"
)

// macRails are the rails of the fake Mac under serve --apps: CPU 20 W,
// GPU 8 W, ANE 1 W, more than its processes draw.
var macRails = power.Values{CPU: 20, GPU: 8, ANE: 1, Total: 29}

func macSample(i int, arrival time.Time) power.Sample {
	return power.Sample{Index: i, Arrival: arrival, Window: time.Second, Power: macRails, Has: power.Reported{CPU: true, GPU: true, ANE: true}}
}

// appsServer is a Server with --apps over fakepm.BusyMac on the clock c,
// its stream's first window in and the processes read once (StartApps),
// as serve begins.
func appsServer(t *testing.T, c *clock, top int) (*Server, *feed) {
	t.Helper()
	mac := fakepm.NewMac(fakepm.BusyMac(), c.Now)
	s, f := offline(t, c, Config{Node: "mac1", Apps: &Apps{Poller: apps.New(mac, mac, apps.Config{Forget: time.Hour}), Top: top}})
	f.ch <- macSample(0, c.Now())
	waitUntil(t, "the first window", func() bool { return s.meter.Totals().Windows == 1 })
	if err := s.StartApps(); err != nil {
		t.Fatal(err)
	}
	return s, f
}

// scraped is a scrape's samples by metric name, each keyed by its labels
// (name=value, sorted, joined with commas).
func scraped(t *testing.T, s *Server) map[string]map[string]float64 {
	t.Helper()
	mfs, err := s.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]float64{}
	for _, mf := range mfs {
		m := map[string]float64{}
		for _, x := range mf.GetMetric() {
			var l []string
			for _, p := range x.GetLabel() {
				l = append(l, p.GetName()+"="+p.GetValue())
			}
			m[strings.Join(l, ",")] = x.GetCounter().GetValue() + x.GetGauge().GetValue()
		}
		out[mf.GetName()] = m
	}
	return out
}

// sumOf is the sum of a metric's samples whose labels hold each of has.
func sumOf(m map[string]float64, has ...string) float64 {
	var sum float64
	for labels, v := range m {
		ok := true
		for _, h := range has {
			ok = ok && strings.Contains(","+labels+",", ","+h+",")
		}
		if ok {
			sum += v
		}
	}
	return sum
}

// serve --apps: at every scrape, the apps' counters and the remainder add
// up to the node's CPU and GPU counters to the nanojoule, a window that
// came but is not read yet included (the node's then wait for it); the
// top two apps have series of their own from their first round, as the
// fake's table gives them, each with the node's name.
func TestServesAppCountersAddUpToTheNodesAtEveryScrape(t *testing.T) {
	c := newClock()
	s, f := appsServer(t, c, 2)
	check := func(when string) map[string]map[string]float64 {
		m := scraped(t, s)
		for _, comp := range []string{"cpu", "gpu"} {
			node := m["exopower_energy_joules_total"]["component="+comp]
			apps := sumOf(m["exopower_app_energy_joules_total"], "component="+comp) + sumOf(m["exopower_app_remainder_energy_joules_total"], "component="+comp)
			if math.Abs(apps-node) > 1e-9 {
				t.Errorf("%s: %s: the apps and the remainder %.12f J, the node %.12f J", when, comp, apps, node)
			}
		}
		return m
	}
	check("before any round")
	for k := 1; k <= 5; k++ {
		c.advance(time.Second)
		f.ch <- macSample(k, c.Now())
		waitUntil(t, "the window", func() bool { return s.meter.Totals().Windows == k+1 })
		check("a window not read yet")
		s.appsRound()
		m := check("after the round")
		// Safari: 7 W CPU, 6.4 W GPU, its series from the second round,
		// its Networking helper's 0.5 J at 3 s.
		cpu := 7 * float64(k-1)
		if k >= 3 {
			cpu += 0.5
		}
		e := m["exopower_app_energy_joules_total"]
		if got := e["app=Safari,component=cpu,node_name=mac1"]; math.Abs(got-cpu) > 1e-9 {
			t.Errorf("round %d: Safari's CPU %.12f J, want %g J", k, got, cpu)
		}
		if len(e) != 6 || m["exopower_app_processes"]["node_name=mac1,state=not_readable"] != 202 {
			t.Errorf("round %d: %d app series (want Safari's, mdworker_shared's and other's, by 2), processes %v", k, len(e), m["exopower_app_processes"])
		}
	}
}

// Without --apps, serve has no app's counter.
func TestWithoutAppsServeHasNoAppsCounters(t *testing.T) {
	c := newClock()
	s, f := offline(t, c, Config{})
	f.ch <- macSample(0, c.Now())
	waitUntil(t, "the first window", func() bool { return s.meter.Totals().Windows == 1 })
	if err := s.StartApps(); err != nil {
		t.Fatal(err)
	}
	for name := range scraped(t, s) {
		if strings.HasPrefix(name, "exopower_app") {
			t.Errorf("%s without --apps", name)
		}
	}
}
