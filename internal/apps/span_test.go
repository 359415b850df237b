package apps_test

import (
	"strings"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/apps"
	"github.com/exopower/exopower/internal/fakepm"
	"github.com/exopower/exopower/internal/safe"
	"github.com/exopower/exopower/internal/wire"
)

// spanMac is a Poller over table on a clock the test moves, started at
// t0 and read every second by round.
type spanMac struct {
	t   *testing.T
	c   *clock
	p   *apps.Poller
	at  time.Duration // the last round's
	all []*apps.Span  // the spans each round is handed
}

func newSpanMac(t *testing.T, table []fakepm.Process, cfg apps.Config) *spanMac {
	c := &clock{t: t0}
	mac := fakepm.NewMac(table, c.now)
	m := &spanMac{t: t, c: c, p: apps.New(mac, mac, cfg)}
	if err := m.p.Start(apps.Reading{At: t0, Has: ioreportHas}); err != nil {
		t.Fatal(err)
	}
	return m
}

// round reads the processes at the next second, and hands the round to
// every span.
func (m *spanMac) round() {
	m.at += s
	m.c.t = t0.Add(m.at)
	if err := m.p.Round(apps.Reading{At: m.c.t, Energy: rails.Scale(m.at.Seconds()), Has: ioreportHas}); err != nil {
		m.t.Fatal(err)
	}
	for _, sp := range m.all {
		sp.Add(m.p)
	}
}

// open opens the span of name that starts at start (from t0), as a
// span's owner does after the poller's last round.
func (m *spanMac) open(name string, start time.Duration) *apps.Span {
	sp := m.p.OpenSpan(name, t0.Add(start))
	m.all = append(m.all, sp)
	return sp
}

// checkApp holds the figures of an app's span to want's, to the
// nanojoule.
func checkApp(t *testing.T, what string, got *wire.App, want wire.App) {
	t.Helper()
	e, w := got.EnergyJoules, want.EnergyJoules
	if got.Name != want.Name || got.Seen != want.Seen || got.Processes != want.Processes || got.ProcessesRunning != want.ProcessesRunning ||
		got.ProcessesNotReadable != want.ProcessesNotReadable || got.Reads != want.Reads || !nearly(float64(got.ReadSeconds), float64(want.ReadSeconds)) ||
		!nearly(float64(e.CPU), float64(w.CPU)) || !nearly(float64(e.GPU), float64(w.GPU)) || !nearly(float64(e.Total), float64(w.CPU+w.GPU)) {
		t.Errorf("%s:\n got %+v\nwant %+v", what, *got, want)
	}
	if got.ReadSeconds > 0 {
		p, d := got.AvgPowerWatts, float64(got.ReadSeconds)
		if !nearly(float64(p.CPU), float64(e.CPU)/d) || !nearly(float64(p.GPU), float64(e.GPU)/d) || !nearly(float64(p.Total), float64(e.Total)/d) {
			t.Errorf("%s: average power %+v, want the energy %+v over %v s", what, p, e, d)
		}
	}
}

// A span of Safari from 1.5 s to 4.2 s: its energy from the read at 1 s
// (the last at or before the start) to the read at 5 s (the first at or
// after the end), to the nanojoule as the table gives it, the same as
// the increase of its Energy between those reads (what serve's counter
// of it increases by); the read at 6 s is none of the span's. A span
// set up only after the read at 2 s, which came after its start, counts
// that read too, from the one before it.
func TestAnAppsSpanIsItsEnergyFromTheReadBeforeItsStartToTheReadAfterItsEnd(t *testing.T) {
	m := newSpanMac(t, fakepm.BusyMac(), apps.Config{})
	m.round()
	before := appNamed(t, m.p.Snapshot(), "Safari").Energy
	sp := m.open("Safari", 1500*ms)
	m.round()
	late := m.open("Safari", 1500*ms)
	m.round()
	// Open: the reads so far, Networking's 0.5 J at 3 s from its start
	// at 2.5 s.
	open, warnings := sp.Wire(m.p)
	checkApp(t, "open", open, wire.App{Name: "Safari", Seen: true, Processes: 3, ProcessesRunning: 3, Reads: 2, ReadSeconds: 2,
		EnergyJoules: wire.AppFigures{CPU: 14.5, GPU: 2 * 0.8 * 8}})
	if len(warnings) != 0 {
		t.Errorf("warnings %q", warnings)
	}
	m.round()
	sp.End(t0.Add(4200 * ms))
	late.End(t0.Add(4200 * ms))
	if sp.Covered() {
		t.Error("covered before the read at or after its end")
	}
	m.round()
	if !sp.Covered() || sp.Last() != t0.Add(5*s) {
		t.Errorf("covered %v, last read at %v: want the read at 5 s", sp.Covered(), sp.Last().Sub(t0))
	}
	after := appNamed(t, m.p.Snapshot(), "Safari").Energy
	m.round()
	// 7 W of CPU (3 + 4) for 4 s and Networking's 0.5 J; 0.8 of the
	// GPU's 8 W.
	want := wire.App{Name: "Safari", Seen: true, Processes: 3, ProcessesRunning: 2, Reads: 4, ReadSeconds: 4,
		EnergyJoules: wire.AppFigures{CPU: 28.5, GPU: 4 * 0.8 * 8}}
	for _, c := range []struct {
		what string
		sp   *apps.Span
	}{{"ended", sp}, {"set up after a read within it", late}} {
		got, warnings := c.sp.Wire(m.p)
		checkApp(t, c.what, got, want)
		if len(warnings) != 0 {
			t.Errorf("%s: warnings %q", c.what, warnings)
		}
	}
	if d := after.CPU - before.CPU; !nearly(d, 28.5) {
		t.Errorf("Safari's Energy rose by %.9f J between the reads at 1 s and 5 s, want 28.5 J", d)
	}
}

// An app that starts within the span counts from its start, and one
// that ends within it until its last read; one forgotten (gone for
// Config.Forget) keeps what it had in the span. A span set up after two
// reads within it says what it left out.
func TestAnAppsSpanCountsAnAppThatComesOrGoes(t *testing.T) {
	late := fakepm.Process{Name: "Late", Pid: 800, ID: 10010, Path: "/Applications/Late.app/Contents/MacOS/Late", Born: 2500 * ms, Watts: 2}
	m := newSpanMac(t, append(fakepm.BusyMac(), late), apps.Config{Forget: time.Second})
	comes, goes := m.open("Late", 0), m.open("olddaemon", 0)
	m.round()
	m.round()
	missed := m.p.OpenSpan("Terminal", t0.Add(500*ms))
	m.all = append(m.all, missed)
	for range 3 {
		m.round()
	}
	for _, sp := range m.all {
		sp.End(t0.Add(5 * s))
	}
	// Late: 2 W from 2.5 s, read from its start at 3 s.
	got, warnings := comes.Wire(m.p)
	checkApp(t, "Late", got, wire.App{Name: "Late", Seen: true, Processes: 1, ProcessesRunning: 1, Reads: 5, ReadSeconds: 5,
		EnergyJoules: wire.AppFigures{CPU: 1 + 2 + 2}})
	if len(warnings) != 0 {
		t.Errorf("Late: warnings %q", warnings)
	}
	// olddaemon: 1 W, read at 1 and 2 s, gone at 3 s, forgotten at 4 s.
	got, _ = goes.Wire(m.p)
	checkApp(t, "olddaemon", got, wire.App{Name: "olddaemon", Seen: true, Processes: 1, Reads: 5, ReadSeconds: 5, EnergyJoules: wire.AppFigures{CPU: 2}})
	for _, a := range m.p.Snapshot().Apps {
		if a.Name == "olddaemon" {
			t.Error("olddaemon not forgotten: the test proves nothing")
		}
	}
	// Terminal from 0.5 s, set up after the read at 2 s: the read at 1 s
	// is missed (0.1 W + make's 1 W), newtool counted from 2.5 s.
	got, warnings = missed.Wire(m.p)
	checkApp(t, "Terminal", got, wire.App{Name: "Terminal", Seen: true, Processes: 3, ProcessesRunning: 3, Reads: 4, ReadSeconds: 4,
		EnergyJoules: wire.AppFigures{CPU: 4*1.1 + 2.5*2}})
	if len(warnings) != 1 || !strings.Contains(warnings[0], "first 500ms is not counted") {
		t.Errorf("Terminal: warnings %q, want one on the first 500ms", warnings)
	}
}

// Names are matched exactly, case and all: a span of "safari" sees
// nothing, and says which app runs; one of another user's app says its
// CPU energy is not read, and has its share of the GPU's.
func TestAnAppsSpanMatchesNamesExactly(t *testing.T) {
	m := newSpanMac(t, fakepm.BusyMac(), apps.Config{})
	lower, ws := m.open("safari", 0), m.open("WindowServer", 0)
	m.round()
	got, warnings := lower.Wire(m.p)
	checkApp(t, "safari", got, wire.App{Name: "safari", Reads: 1, ReadSeconds: 1})
	if len(warnings) != 1 || !strings.Contains(warnings[0], `case and all, and this Mac runs "Safari"`) {
		t.Errorf("warnings %q", warnings)
	}
	got, warnings = ws.Wire(m.p)
	checkApp(t, "WindowServer", got, wire.App{Name: "WindowServer", Seen: true, Processes: 1, ProcessesRunning: 1, ProcessesNotReadable: 1, Reads: 1, ReadSeconds: 1,
		EnergyJoules: wire.AppFigures{GPU: 0.2 * 8}})
	if len(warnings) != 1 || !strings.Contains(warnings[0], "another user's") {
		t.Errorf("warnings %q", warnings)
	}
}

func TestAnAppsNameIsOneTopCouldShow(t *testing.T) {
	long := strings.Repeat("x", safe.MaxText)
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"Safari", true},
		{"Google Chrome Helper (Renderer)", true},
		{`\x1b]0;pwned\x07`, true}, // as top shows it
		{safe.Text(fakepm.HostileName), true},
		{long, true},
		{long + "…", true},
		{strings.Repeat(`\u009b`, safe.MaxText) + "…", true},
		{strings.Repeat(`\u009b`, safe.MaxText) + "……", false},
		{"", false},
		{"Safari\n", false},
		{"\xff", false},
	} {
		if why := apps.CheckName(c.name); (why == "") != c.ok {
			t.Errorf("%.40q: %q", c.name, why)
		}
	}
}
