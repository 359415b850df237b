// Package fakeplug is a set of fake metered plugs, one of each kind
// exopower reads (Shelly Gen2+ and Gen1, Tasmota, Home Assistant, Kasa),
// for tests and for trying exopower without a plug.
//
// A fake's load draws a known Profile of power; its counter is the exact
// integral of that profile since the fake started (or since its reset),
// rounded down to the kind's own resolution, in the kind's own units.
// The fake reads time from the same clock as the code under test, so a
// test can step through minutes of a plug's life at once, and it knows
// the exact energy of any span (Energy). Faults make it misbehave as
// real plugs do, or as a hostile device on the network would.
package fakeplug

import (
	"fmt"
	"sync"
	"time"
)

// Kind is a kind of plug.
type Kind string

// The kinds of plug a fake can be.
const (
	ShellyGen2    Kind = "shelly-gen2"
	ShellyGen1    Kind = "shelly-gen1"
	Tasmota       Kind = "tasmota"
	HomeAssistant Kind = "home-assistant"
	Kasa          Kind = "kasa"
)

// Config is a fake plug.
type Config struct {
	Kind    Kind
	Profile Profile
	// Now is the fake's clock; nil is time.Now.
	Now func() time.Time
	// Start is when the counter was 0; zero is Now() at New.
	Start time.Time
	// User, Password and Token, when set, are asked for, each kind in
	// its own way: Shelly Gen2+ by SHA-256 digest (user admin), Gen1 by
	// HTTP Basic, Tasmota by its query parameters, Home Assistant by a
	// bearer token. Home Assistant always asks for one (Token).
	User, Password, Token string
	// PM1 makes a Shelly Gen2+ a meter alone (the PM Mini): PM1's status
	// instead of Switch's.
	PM1 bool
	// EnergyRes is a Tasmota's decimals of kWh (0 to 5); 0 is 3 unless
	// EnergyResSet.
	EnergyRes    int
	EnergyResSet bool
	// OldStatus makes a Tasmota too old for Status 10: Status 8 alone.
	OldStatus bool
	// HAUnit and HADecimals are Home Assistant's energy sensor's unit
	// (Wh, kWh, MWh) and decimals; "" is kWh with 3.
	HAUnit     string
	HADecimals int
	// HAPower gives Home Assistant a power sensor beside the energy one.
	HAPower bool
	// KasaOld makes a Kasa plug answer in the older fields (power in W,
	// total in kWh).
	KasaOld bool
	Faults  Faults
}

// Faults are a fake's misbehaviours.
type Faults struct {
	// ResetAt, when set, is when the counter goes back to 0 (a reboot),
	// to count again from there.
	ResetAt time.Time
	// From StallFrom until StallUntil, the readings stay as they were at
	// StallFrom; the load draws on.
	StallFrom, StallUntil time.Time
	// Hang makes every answer wait until the client gives up.
	Hang bool
	// WrongUnits gives Home Assistant's energy sensor a unit of power.
	WrongUnits bool
	// Unavailable makes Home Assistant's sensors "unavailable".
	Unavailable bool
	// Hostile is an answer that tries to hurt the client.
	Hostile Hostile
}

// Hostile is an answer made to hurt a client.
type Hostile int

// The hostile answers.
const (
	NotHostile Hostile = iota
	// HugeBody is a reading's answer of 1 MiB.
	HugeBody
	// HugeHeader is a reading's answer with 64 KiB of headers.
	HugeHeader
	// ControlText puts terminal escapes and newlines in the device's
	// model and name.
	ControlText
	// EchoInInfo puts the credentials the fake was given, and what the
	// client sent, in the device's model and name.
	EchoInInfo
	// EchoInError answers readings with an error whose text holds the
	// credentials and what the client sent.
	EchoInError
	// NaNPower, NegativePower and HugePower are power readings of NaN,
	// -5 W and 1 MW.
	NaNPower
	NegativePower
	HugePower
	// Redirect answers readings with a redirect elsewhere.
	Redirect
)

// Fake is a fake plug.
type Fake struct {
	cfg    Config
	mu     sync.Mutex
	faults Faults
	reqs   int
	hung   chan struct{}
	once   sync.Once
	nonces map[string]bool
}

// New is a fake plug of cfg.
func New(cfg Config) *Fake {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Start.IsZero() {
		cfg.Start = cfg.Now()
	}
	if !cfg.EnergyResSet && cfg.EnergyRes == 0 {
		cfg.EnergyRes = 3
	}
	if cfg.HAUnit == "" {
		cfg.HAUnit, cfg.HADecimals = "kWh", 3
	}
	return &Fake{cfg: cfg, faults: cfg.Faults, hung: make(chan struct{}), nonces: map[string]bool{}}
}

// SetFaults changes the fake's faults from now on.
func (f *Fake) SetFaults(x Faults) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults = x
}

func (f *Fake) currentFaults() Faults {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.faults
}

// Energy is the exact energy the load drew over [from, to], in joules.
func (f *Fake) Energy(from, to time.Time) float64 { return f.cfg.Profile.Energy(from, to) }

// Requests is how many requests the fake has taken.
func (f *Fake) Requests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reqs
}

// Hung is closed when the first request is held by Faults.Hang.
func (f *Fake) Hung() <-chan struct{} { return f.hung }

// state is what the device would say now: its power in watts and the
// energy its counter holds, in joules, before rounding to its
// resolution.
func (f *Fake) state() (watts, joules float64) {
	x := f.currentFaults()
	t := f.cfg.Now()
	if !x.StallFrom.IsZero() && !t.Before(x.StallFrom) && (x.StallUntil.IsZero() || t.Before(x.StallUntil)) {
		t = x.StallFrom
	}
	zero := f.cfg.Start
	if !x.ResetAt.IsZero() && !t.Before(x.ResetAt) {
		zero = x.ResetAt
	}
	if t.Before(zero) {
		return f.cfg.Profile.At(t), 0
	}
	return f.cfg.Profile.At(t), f.cfg.Profile.Energy(zero, t)
}

// power is the power reading as the fake writes it, in watts times
// scale (1000 for milliwatts), a hostile one included.
func (f *Fake) power(watts, scale float64, format string) string {
	switch f.currentFaults().Hostile {
	case NaNPower:
		return "NaN"
	case NegativePower:
		watts = -5
	case HugePower:
		watts = 1e6
	}
	return fmt.Sprintf(format, watts*scale)
}

// fixed writes n counts of 10^-digits as a decimal with digits
// decimals, without a float's rounding.
func fixed(n int64, digits int) string {
	if digits == 0 {
		return fmt.Sprint(n)
	}
	p := int64(1)
	for range digits {
		p *= 10
	}
	return fmt.Sprintf("%d.%0*d", n/p, digits, n%p)
}
