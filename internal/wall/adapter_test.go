package wall_test

import (
	"context"
	"errors"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/ioreport"
	"github.com/exopower/exopower/internal/wall"
)

// entry is an AppleSmartBattery entry as the binding hands it back:
// telemetry's powers in mW (nil: no PowerTelemetryData).
func entry(ac bool, telemetry map[string]int64, smc map[string]float64) ioreport.BatteryEntry {
	return ioreport.BatteryEntry{Found: true, Flags: map[string]bool{"BatteryInstalled": true, "ExternalConnected": ac},
		Numbers: map[string]int64{"UpdateTime": 1785304833, "Voltage": 12336, "InstantAmperage": 0}, Telemetry: telemetry, SMC: smc}
}

func tele(in, loss, load, battery int64) map[string]int64 {
	return map[string]int64{"SystemPowerIn": in, "AdapterEfficiencyLoss": loss, "SystemLoad": load, "BatteryPower": battery,
		"SystemPowerInAccumulatorCount": 153016, "SystemLoadAccumulatorCount": 160021}
}

// The adapter's reading from the entry, the figures of public dumps:
// the wall is the DC input and the adapter's loss, 0 on battery, where
// the battery's discharge is what the Mac drew.
func TestTheAdapterReadsTheWallFromTheEntry(t *testing.T) {
	for _, tc := range []struct {
		name             string
		e                ioreport.BatteryEntry
		wall, battery    float64
		hasBattery, onAC bool
	}{
		{"on AC, not charging: the input and its loss", entry(true, tele(13177, 193, 13177, 0), nil), 13.370, 0, true, true},
		{"charging: the input holds the charge", entry(true, tele(42825, 1181, 19852, 22973), nil), 44.006, 22.973, true, true},
		{"a loss below 0 counts as none", entry(true, tele(5933, -55, 5933, 0), nil), 5.933, 0, true, true},
		{"on battery the wall is 0, the battery discharges", entry(false, tele(0, 0, 4636, -4636), nil), 0, -4.636, true, false},
		{"a loss on battery is not the wall's", entry(false, tele(0, 250, 4636, -4636), nil), 0, -4.636, true, false},
		{"no PowerTelemetryData: PDTR, with no loss", entry(true, nil, map[string]float64{"PDTR": 35.25, "PPBR": -1.5}), 35.25, 0, true, true},
		{"no PowerTelemetryData on battery: PPBR as a discharge", withoutPack(entry(false, nil, map[string]float64{"PDTR": 0, "PPBR": 4.625})), 0, -4.625, true, false},
		{"the pack's volts and amps before PPBR", withAmps(entry(false, nil, map[string]float64{"PPBR": 9}), -386), 0, -4.761696, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := wall.ReadAdapter(tc.e)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(s.Wall-tc.wall) > 1e-9 || math.Abs(s.Battery-tc.battery) > 1e-9 || s.HasBattery != tc.hasBattery || s.OnAC != tc.onAC {
				t.Errorf("%+v; want the wall %v W, the battery %v W (%v), on AC %v", s, tc.wall, tc.battery, tc.hasBattery, tc.onAC)
			}
		})
	}
}

func withoutPack(e ioreport.BatteryEntry) ioreport.BatteryEntry {
	e.Numbers = map[string]int64{}
	return e
}

func withAmps(e ioreport.BatteryEntry, ma int64) ioreport.BatteryEntry {
	e.Numbers["InstantAmperage"] = ma
	return e
}

// What cannot be read, or cannot be true, is refused, saying why.
func TestTheAdapterRefusesWhatCannotBeTrue(t *testing.T) {
	noFlag := entry(true, tele(13177, 193, 13177, 0), nil)
	delete(noFlag.Flags, "ExternalConnected")
	for _, tc := range []struct {
		name, want string
		e          ioreport.BatteryEntry
	}{
		{"no entry", "no battery", ioreport.BatteryEntry{}},
		{"a desktop's stub", "BatteryInstalled false", ioreport.BatteryEntry{Found: true, Flags: map[string]bool{"BatteryInstalled": false, "ExternalConnected": true}}},
		{"no telemetry, no PDTR", "PowerTelemetryData is missing on this model", entry(true, nil, map[string]float64{"PPBR": 1})},
		{"an input below 0", "no power an adapter gives", entry(true, tele(-5, 0, 0, 0), nil)},
		{"an input beyond any Mac", "no power an adapter gives", entry(true, tele(2_500_000, 0, 0, 0), nil)},
		{"a loss beyond any Mac", "more than any Mac draws", entry(true, tele(10000, 2_100_000, 0, 0), nil)},
		{"a PDTR that is not a number", "no power an adapter gives", entry(true, nil, map[string]float64{"PDTR": math.NaN()})},
		{"no SystemPowerIn on AC", "no SystemPowerIn", entry(true, map[string]int64{"SystemLoad": 1}, nil)},
		{"no ExternalConnected", "ExternalConnected is missing", noFlag},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if s, err := wall.ReadAdapter(tc.e); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%+v, %v; want an error saying %q", s, err, tc.want)
			}
		})
	}
}

// source hands out entries, the last again once they run out.
type source struct {
	entries []ioreport.BatteryEntry
	closed  bool
}

func (s *source) Read() (ioreport.BatteryEntry, error) {
	if s.closed {
		return ioreport.BatteryEntry{}, errors.New("closed")
	}
	e := s.entries[0]
	if len(s.entries) > 1 {
		s.entries = s.entries[1:]
	}
	return e, nil
}

func (s *source) Close() error { s.closed = true; return nil }

// A desktop, or a MacBook whose adapter cannot be read, is no plug, and
// is said to be unsupported with what to use instead.
func TestAnAdapterThatCannotBeReadIsUnsupported(t *testing.T) {
	for _, e := range []ioreport.BatteryEntry{{}, entry(true, nil, nil)} {
		src := &source{entries: []ioreport.BatteryEntry{e}}
		_, err := wall.OpenAdapter(src, nil)
		var ue *wall.UnsupportedError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "metered plug") || !src.closed {
			t.Errorf("%v (closed %v); want an UnsupportedError that names a metered plug, the source closed", err, src.closed)
		}
	}
	if runtime.GOOS != "darwin" {
		target, err := wall.Parse("adapter")
		if err != nil || target.String() != "adapter" {
			t.Fatalf("%v, %v", target, err)
		}
		_, err = wall.Open(context.Background(), target, wall.Credentials{})
		var ue *wall.UnsupportedError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "reads a MacBook's adapter through macOS's IORegistry: only on macOS") {
			t.Errorf("--wall adapter on %s: %v", runtime.GOOS, err)
		}
	}
}

// PowerTelemetryData repeats for up to a minute between publications:
// the repeats are fresh, and a meter counts them, until it has stayed
// the same for three minutes on AC, when a reading is stale; a new
// publication makes it fresh again.
func TestTheAdapterTellsAStaleReadingItself(t *testing.T) {
	clk := newClock()
	same := entry(true, tele(13177, 193, 13177, 0), nil)
	next := entry(true, tele(13177, 193, 13177, 0), nil)
	next.Telemetry["SystemLoadAccumulatorCount"]++
	src := &source{entries: []ioreport.BatteryEntry{same}}
	p, err := wall.OpenAdapter(src, clk.Now)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Info().JudgesStale || p.Info().Kind != wall.KindAdapter || p.Info().HasCounter {
		t.Fatalf("%+v", p.Info())
	}
	m := wall.NewMeter(p, time.Second, clk.Now)
	from := clk.Now()
	for range 60 {
		if err := m.Poll(context.Background()); err != nil {
			t.Fatal(err)
		}
		clk.Add(time.Second)
	}
	sp := m.Energy(from, clk.Now().Add(-time.Second))
	if math.Abs(sp.Joules-59*13.370) > 1e-6 || sp.Coverage < 0.99 || len(sp.Warnings) != 0 {
		t.Errorf("a minute of one publication: %+v; want 59 s at 13.37 W, covered, no warning", sp)
	}
	clk.Add(2*time.Minute + time.Second)
	if _, err := p.Read(context.Background()); err == nil || !strings.Contains(err.Error(), "stale") {
		t.Errorf("after three minutes of one publication: %v, want it stale", err)
	}
	src.entries = []ioreport.BatteryEntry{next}
	if r, err := p.Read(context.Background()); err != nil || r.Power != 13.370 {
		t.Errorf("a new publication: %+v, %v", r, err)
	}
	p.Close()
	if _, err := p.Read(context.Background()); !errors.Is(err, wall.ErrClosed) || !src.closed {
		t.Errorf("a read after Close: %v", err)
	}
}

// On battery the wall reads 0 W, and a span says that the battery's
// discharge is what the Mac drew.
func TestASpanOnBatterySaysTheDischarge(t *testing.T) {
	clk := newClock()
	src := &source{entries: []ioreport.BatteryEntry{entry(false, tele(0, 0, 4636, -4636), nil)}}
	p, err := wall.OpenAdapter(src, clk.Now)
	if err != nil {
		t.Fatal(err)
	}
	m := wall.NewMeter(p, time.Second, clk.Now)
	from := clk.Now()
	for range 5 {
		m.Poll(context.Background())
		clk.Add(time.Second)
	}
	sp := m.Energy(from, clk.Now().Add(-time.Second))
	if sp.Joules != 0 || !strings.Contains(strings.Join(sp.Warnings, "\n"), "ran from its battery for 5 of 5 readings: the wall gave it 0 W then, and its battery's discharge, 4.64 W on average, is what it drew") {
		t.Errorf("%+v", sp)
	}
}
