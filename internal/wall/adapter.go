package wall

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/exopower/exopower/internal/ioreport"
	"github.com/exopower/exopower/internal/power"
)

// A MacBook's adapter, read as a plug: --wall adapter. No device on the
// network but macOS's own account of its adapter and battery, the
// IORegistry's AppleSmartBattery entry (and the SMC's PDTR where the
// entry has no PowerTelemetryData), read in process without root
// through internal/ioreport. What is read, in which unit, and what is
// refused, with the public evidence for each, is in docs/wall.md.

// maxQuiet is how long PowerTelemetryData may stay the same on AC before
// its reading is stale: three times the longest republishing interval
// reported (60 s). Until then a repeated reading is taken as fresh,
// which is what the publishing every 10 to 60 s makes it.
const maxQuiet = 3 * time.Minute

// AdapterSource gives AppleSmartBattery's entry: ioreport's reader on a
// Mac, a test's elsewhere.
type AdapterSource interface {
	Read() (ioreport.BatteryEntry, error)
	Close() error
}

// AdapterState is one reading of a MacBook's adapter and battery, in
// watts.
type AdapterState struct {
	// OnAC says the adapter is connected (ExternalConnected).
	OnAC bool
	// Wall is the power at the wall: Input and Loss; 0 on battery.
	Wall float64
	// Input is the DC power coming in from the adapter.
	Input float64
	// Loss is the adapter's own loss as macOS estimates it, when HasLoss
	// (never below 0).
	Loss    float64
	HasLoss bool
	// Load is what the Mac used (its charging apart), when HasLoad.
	Load    float64
	HasLoad bool
	// Battery is the battery's flow, above 0 charging, below 0
	// discharging, when HasBattery; BatteryFrom names its key.
	Battery     float64
	HasBattery  bool
	BatteryFrom string
	// Telemetry says PowerTelemetryData gave Input; the SMC's PDTR did
	// where it is missing.
	Telemetry bool
	// Errors is PowerTelemetryErrorCount, where given.
	Errors int64
	// publish tells one publication of PowerTelemetryData from the next:
	// UpdateTime and two accumulators' sample counts.
	publish    [3]int64
	hasPublish bool
}

// errDesktop and errNoInput are the Macs the adapter cannot be read on.
var (
	errDesktop = errors.New("this Mac has no battery, and so no adapter's telemetry (AppleSmartBattery is absent, or a stub with BatteryInstalled false, as on a desktop): measure at the wall with a metered plug (docs/wall.md)")
	errNoInput = errors.New("PowerTelemetryData is missing on this model, and its SMC has no PDTR: the adapter's power cannot be read here; measure at the wall with a metered plug (docs/wall.md)")
)

// ReadAdapter makes an AdapterState of the entry: keys chosen, units
// applied (mW to W), signs kept, and what cannot be true refused.
func ReadAdapter(e ioreport.BatteryEntry) (AdapterState, error) {
	if installed, ok := e.Flags["BatteryInstalled"]; !e.Found || (ok && !installed) {
		return AdapterState{}, errDesktop
	}
	ac, ok := e.Flags["ExternalConnected"]
	if !ok {
		return AdapterState{}, fmt.Errorf("AppleSmartBattery does not say whether the adapter is connected (ExternalConnected is %s)", or(e.Refused["ExternalConnected"], "missing"))
	}
	s := AdapterState{OnAC: ac, Telemetry: e.Telemetry != nil}
	s.publishOf(e)
	if err := s.input(e); err != nil {
		return AdapterState{}, err
	}
	s.battery(e)
	if !s.OnAC {
		s.Input, s.Loss, s.HasLoss = 0, 0, false
	}
	s.Wall = s.Input + s.Loss
	return s, nil
}

// input reads the DC input and the adapter's loss: PowerTelemetryData's
// SystemPowerIn and AdapterEfficiencyLoss (mW), or the SMC's PDTR (W).
func (s *AdapterState) input(e ioreport.BatteryEntry) error {
	t := e.Telemetry
	if t == nil {
		pdtr, ok := e.SMC["PDTR"]
		switch {
		case !s.OnAC:
			return nil
		case !ok:
			return errNoInput
		case !believable(pdtr):
			return fmt.Errorf("the SMC's PDTR reads %g W, no power an adapter gives", pdtr)
		}
		s.Input = pdtr
		return nil
	}
	in, ok := t["SystemPowerIn"]
	if !ok && s.OnAC {
		return fmt.Errorf("PowerTelemetryData holds no SystemPowerIn (%s)", or(e.Refused["PowerTelemetryData.SystemPowerIn"], "missing"))
	}
	s.Input = milli(in)
	if s.OnAC && !believable(s.Input) {
		return fmt.Errorf("PowerTelemetryData's SystemPowerIn reads %d mW, no power an adapter gives", in)
	}
	if loss, ok := t["AdapterEfficiencyLoss"]; ok {
		// Below 0 on some Macs (-55 mW at 6 W): an estimate's error, not
		// power given back; taken as no loss.
		s.Loss, s.HasLoss = max(milli(loss), 0), true
		if !believable(s.Loss) {
			return fmt.Errorf("PowerTelemetryData's AdapterEfficiencyLoss reads %d mW, more than any Mac draws", loss)
		}
	}
	if load, ok := t["SystemLoad"]; ok && believable(milli(load)) {
		s.Load, s.HasLoad = milli(load), true
	}
	s.Errors = t["PowerTelemetryErrorCount"]
	return nil
}

// battery reads the battery's flow: PowerTelemetryData's BatteryPower
// (mW, signed), else the pack's Voltage (mV) times its InstantAmperage
// (mA, signed), else, on battery alone, the SMC's PPBR, whose sign
// differs between models: there the flow can only be a discharge.
func (s *AdapterState) battery(e ioreport.BatteryEntry) {
	v, hasV := e.Numbers["Voltage"]
	i, hasI := e.Numbers["InstantAmperage"]
	ppbr, hasP := e.SMC["PPBR"]
	if bp, ok := e.Telemetry["BatteryPower"]; ok {
		s.Battery, s.HasBattery, s.BatteryFrom = milli(bp), true, "PowerTelemetryData's BatteryPower"
	} else if hasV && hasI && v > 0 {
		s.Battery, s.HasBattery, s.BatteryFrom = float64(v)*float64(i)/1e6, true, "the battery's Voltage × InstantAmperage"
	} else if hasP && !s.OnAC && !math.IsNaN(ppbr) {
		s.Battery, s.HasBattery, s.BatteryFrom = -math.Abs(ppbr), true, "the SMC's PPBR"
	}
	if s.HasBattery && math.Abs(s.Battery) > power.MaxSystemWatts {
		s.Battery, s.HasBattery, s.BatteryFrom = 0, false, ""
	}
}

// publishOf keeps what tells one publication of PowerTelemetryData from
// the next.
func (s *AdapterState) publishOf(e ioreport.BatteryEntry) {
	for i, v := range []struct {
		n  int64
		ok bool
	}{
		{e.Numbers["UpdateTime"], hasKey(e.Numbers, "UpdateTime")},
		{e.Telemetry["SystemPowerInAccumulatorCount"], hasKey(e.Telemetry, "SystemPowerInAccumulatorCount")},
		{e.Telemetry["SystemLoadAccumulatorCount"], hasKey(e.Telemetry, "SystemLoadAccumulatorCount")},
	} {
		s.publish[i] = v.n
		s.hasPublish = s.hasPublish || v.ok
	}
}

func hasKey(m map[string]int64, k string) bool { _, ok := m[k]; return ok }

// believable is a power from 0 to the most a Mac draws.
func believable(w float64) bool { return w >= 0 && w <= power.MaxSystemWatts }

func milli(mw int64) float64 { return float64(mw) / 1000 }

func or(s, otherwise string) string {
	if s == "" {
		return otherwise
	}
	return s
}

// adapter is the Plug of --wall adapter.
type adapter struct {
	src  AdapterSource
	now  func() time.Time
	info Info
	mu   sync.Mutex
	// last is the newest state read, changed when its publication last
	// changed (on now's clock).
	last    AdapterState
	changed time.Time
	closed  bool
}

// openAdapter opens macOS's reader of the adapter.
func openAdapter() (Plug, error) {
	src, err := ioreport.OpenBattery()
	if errors.Is(err, ioreport.ErrNotMacOS) {
		return nil, &UnsupportedError{Address: KindAdapter, Reason: err.Error() + "; elsewhere, measure at the wall with a metered plug (docs/wall.md)"}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", KindAdapter, err)
	}
	return OpenAdapter(src, time.Now)
}

// OpenAdapter reads src once and returns it as a Plug: a desktop, or a
// MacBook whose adapter cannot be read, is an UnsupportedError that says
// what to use instead. now is the clock that tells how long
// PowerTelemetryData has stayed the same (time.Now when nil).
func OpenAdapter(src AdapterSource, now func() time.Time) (Plug, error) {
	if now == nil {
		now = time.Now
	}
	e, err := src.Read()
	var s AdapterState
	if err == nil {
		s, err = ReadAdapter(e)
	}
	if err != nil {
		src.Close()
		if errors.Is(err, errDesktop) || errors.Is(err, errNoInput) {
			return nil, &UnsupportedError{Address: KindAdapter, Reason: err.Error()}
		}
		return nil, fmt.Errorf("%s: %w", KindAdapter, err)
	}
	a := &adapter{src: src, now: now, last: s, changed: now()}
	a.info = Info{Kind: KindAdapter, Address: KindAdapter, HasPower: true, Name: "the SMC's PDTR",
		// PowerTelemetryData repeats between its publications; the SMC's
		// PDTR is read live, and a PDTR that stands still is as stalled
		// as a plug.
		JudgesStale: s.Telemetry && s.hasPublish}
	if s.Telemetry {
		a.info.Name = "AppleSmartBattery's PowerTelemetryData"
	}
	return a, nil
}

func (a *adapter) Info() Info { return a.info }

// Read reads the entry now. On AC, a PowerTelemetryData that has not
// been republished for maxQuiet is stale, and its reading an error.
func (a *adapter) Read(context.Context) (Reading, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return Reading{}, ErrClosed
	}
	e, err := a.src.Read()
	if err != nil {
		return Reading{}, err
	}
	s, err := ReadAdapter(e)
	if err != nil {
		return Reading{}, err
	}
	now := a.now()
	if s.publish != a.last.publish || s.hasPublish != a.last.hasPublish {
		a.changed = now
	}
	a.last = s
	if quiet := now.Sub(a.changed); a.info.JudgesStale && s.OnAC && quiet > maxQuiet {
		return Reading{}, fmt.Errorf("PowerTelemetryData has not been republished for %v (it is every 10 to 60 s): its reading is stale, and that time is not counted", quiet.Round(time.Second))
	}
	r := Reading{Power: s.Wall, HasPower: true, OnBattery: !s.OnAC, Battery: s.Battery, HasBattery: s.HasBattery}
	if err := check(r); err != nil {
		return Reading{}, err
	}
	return r, nil
}

// State is the newest reading's detail, for doctor.
func (a *adapter) State() AdapterState {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.last
}

func (a *adapter) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return nil
	}
	a.closed = true
	return a.src.Close()
}
