package fakepm

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/exopower/exopower/internal/ioreport"
)

// The fake IOReport: a Library whose counters are the exact integral of
// a Profile (with its overrides, when it has them) since it was opened, each cut to its channel's unit as
// IOReport's are, and whose SMC reads the fake system's power at that
// instant. exopower's --source ioreport runs end to end over it on Linux.

// The fake system's power is smooth, as a whole machine's is beside its
// SoC's steps: SystemBase + SystemSwing × sin(2π t / SystemPeriod), t the
// Unix time, so that any process can compute its exact integral. DRAM
// draws DRAMWatts throughout.
const (
	SystemBase   = 60.0
	SystemSwing  = 8.0
	SystemPeriod = 20.0
	DRAMWatts    = 1.25
)

// Sine is a smooth power: Base + Swing × sin(2π t / Period) watts, t the
// Unix time in seconds.
type Sine struct{ Base, Swing, Period float64 }

// DefaultSystem is the fake system's power unless FAKEPM_IOREPORT says
// system=BASE,SWING,PERIOD.
var DefaultSystem = Sine{SystemBase, SystemSwing, SystemPeriod}

// Power is the sine's power at t, in watts.
func (s Sine) Power(t time.Time) float64 {
	return s.Base + s.Swing*math.Sin(2*math.Pi*s.phase(t)/s.Period)
}

// Energy is the sine's exact energy over [from, to], in joules.
func (s Sine) Energy(from, to time.Time) float64 {
	k := 2 * math.Pi / s.Period
	return s.Base*to.Sub(from).Seconds() - s.Swing/k*(math.Cos(k*s.phase(to))-math.Cos(k*s.phase(from)))
}

// phase is the seconds of t into its period, in whole nanoseconds: a
// float64 of seconds since the epoch keeps only about 0.2 µs.
func (s Sine) phase(t time.Time) float64 {
	period := int64(s.Period * 1e9)
	return float64(t.UnixNano()%period) / 1e9
}

// SystemPower is the fake system's power at t, in watts.
func SystemPower(t time.Time) float64 { return DefaultSystem.Power(t) }

// SystemEnergy is the fake system's exact energy over [from, to], in
// joules.
func SystemEnergy(from, to time.Time) float64 { return DefaultSystem.Energy(from, to) }

// ParseSine reads BASE,SWING,PERIOD: watts, watts, seconds above 0.
func ParseSine(v string) (Sine, error) {
	var s Sine
	if _, err := fmt.Sscanf(v, "%g,%g,%g", &s.Base, &s.Swing, &s.Period); err != nil || s.Period <= 0 || s.Base < math.Abs(s.Swing) {
		return Sine{}, fmt.Errorf("system=%s: want BASE,SWING,PERIOD, watts never below 0 and seconds above 0", v)
	}
	return s, nil
}

// FakeChannels are the fake's Energy Model group: an M1-like inventory,
// the GPU in nJ as on real Macs, with channels that carry the same energy
// again or a part of it (GPU0, the CPU's clusters), which must not count.
var FakeChannels = []ioreport.Channel{
	{Group: "Energy Model", Name: "EACC_CPU", Unit: "mJ"},
	{Group: "Energy Model", Name: "PACC_CPU", Unit: "mJ"},
	{Group: "Energy Model", Name: "CPU Energy", Unit: "mJ"},
	{Group: "Energy Model", Name: "GPU0", Unit: "mJ"},
	{Group: "Energy Model", Name: "GPU SRAM0", Unit: "mJ"},
	{Group: "Energy Model", Name: "GPU Energy", Unit: "nJ"},
	{Group: "Energy Model", Name: "ANE", Unit: "mJ"},
	{Group: "Energy Model", Name: "DRAM", Unit: "mJ"},
	{Group: "Energy Model", Name: "ISP", Unit: "mJ"},
	{Group: "Energy Model", Name: "PCIe Port 0 Energy", Unit: "uJ"},
}

// IOReport is the fake Library.
type IOReport struct {
	live LivePower
	mode string
	back int  // reads after which the counters reset; 0: never
	sys  Sine // the system's power
	// zeroEvery makes every so many reads' CPU counter 0, as the binding
	// writes for a channel with no simple value; 0: never.
	zeroEvery int
	// jumpAt makes the CPU's counter jump by 1e15 J at that read and go
	// on from there; 0: never.
	jumpAt int
	origin time.Time
	now    func() time.Time
	mu     sync.Mutex
	reads  int
	closed bool
	// selected are the channels a Read fills; nil: every one.
	selected []int
}

// NewIOReport opens the fake over prof. mode, from FAKEPM_IOREPORT, makes
// it behave as some Macs do: "batched" publishes the mJ counters every 2 s
// only; "cpu-stuck" never moves the CPU's counter; "no-smc" has no SMC;
// "back-after=N" resets the counters after N reads; "cpu-zero-every=N"
// reads the CPU's counter as 0 every N reads (a glitch, the energy still
// counted behind it); "cpu-jump-at=N" makes the CPU's counter jump by
// 1e15 J at read N and go on from there; "system=BASE,SWING,PERIOD"
// makes the system's power that sine instead of DefaultSystem's (the
// SoC's is the profile's still).
func NewIOReport(prof Profile, mode string, now func() time.Time) *IOReport {
	return NewLiveIOReport(LivePower{Profile: prof}, mode, now)
}

// NewLiveIOReport is NewIOReport over a profile with an overrides file,
// which each Read reads again.
func NewLiveIOReport(live LivePower, mode string, now func() time.Time) *IOReport {
	if now == nil {
		now = time.Now
	}
	f := &IOReport{live: live, mode: mode, origin: now(), now: now, sys: DefaultSystem}
	if v, ok := strings.CutPrefix(mode, "system="); ok {
		if sys, err := ParseSine(v); err == nil {
			f.sys = sys
		}
	}
	if n, ok := strings.CutPrefix(mode, "back-after="); ok {
		f.back, _ = strconv.Atoi(n)
	}
	if n, ok := strings.CutPrefix(mode, "cpu-zero-every="); ok {
		f.zeroEvery, _ = strconv.Atoi(n)
	}
	if n, ok := strings.CutPrefix(mode, "cpu-jump-at="); ok {
		f.jumpAt, _ = strconv.Atoi(n)
	}
	return f
}

// Subscribe names the channels.
func (f *IOReport) Subscribe() ([]ioreport.Channel, error) { return FakeChannels, nil }

// Read reads each counter: the exact energy since the fake opened, cut to
// the channel's unit.
func (f *IOReport) Read(values []int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return errors.New("fake IOReport: read after close")
	}
	now := f.now()
	// The overrides are read after the clock, so that every span written
	// before now counts.
	power, err := f.live.Read()
	if err != nil {
		return fmt.Errorf("fake IOReport: %w", err)
	}
	f.reads++
	t := now
	if f.mode == "batched" {
		// The mJ counters as of the last whole 2 s since the origin.
		t = f.origin.Add(t.Sub(f.origin).Truncate(2 * time.Second))
	}
	e := power.Energy(f.origin, now)
	eb := power.Energy(f.origin, t)
	dram := DRAMWatts * t.Sub(f.origin).Seconds()
	if f.back > 0 && f.reads > f.back {
		// Reset, as on a reboot of the counters: from 0 again.
		e, eb, dram = Watts{}, Watts{}, 0
	}
	cpu := eb[0]
	if f.mode == "cpu-stuck" || f.zeroEvery > 0 && f.reads%f.zeroEvery == 0 {
		cpu = 0
	}

	for i, c := range FakeChannels {
		if f.selected != nil && !slices.Contains(f.selected, i) {
			continue // left as it is, as IOReport's binding does
		}
		var j float64
		switch c.Name {
		case "CPU Energy":
			j = cpu
		case "EACC_CPU":
			j = cpu / 4
		case "PACC_CPU":
			j = cpu * 3 / 4
		case "GPU Energy":
			j = e[1] // nJ: moves with every window, as on real Macs
		case "GPU0":
			j = eb[1]
		case "ANE":
			j = eb[2]
		case "DRAM":
			j = dram
		}
		values[i] = int64(math.Floor(j / unitJoules(c.Unit)))
		if c.Name == "CPU Energy" && f.jumpAt > 0 && f.reads >= f.jumpAt {
			values[i] += 1e18 // 1e15 J, added in whole counts: no float64 holds both
		}
	}
	return nil
}

// Select makes the reads that follow fill only the channels at indices;
// nil: every one.
func (f *IOReport) Select(indices []int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.selected = slices.Clone(indices)
}

func unitJoules(u string) float64 {
	return map[string]float64{"mJ": 1e-3, "uJ": 1e-6, "nJ": 1e-9}[u]
}

// SystemPower reads the fake system's power now.
func (f *IOReport) SystemPower() (float64, bool) {
	if f.mode == "no-smc" {
		return 0, false
	}
	return f.sys.Power(f.now()), true
}

// Machine names a Mac.
func (f *IOReport) Machine() (string, string) { return "Mac14,14", "24F74" }

// Close closes the fake.
func (f *IOReport) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	return nil
}
