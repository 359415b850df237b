// Package wall reads a metered smart plug on the local network, the plug
// a Mac's power adapter is plugged into, and places its readings on
// exopower's timeline: the power at the wall, which holds everything the
// Mac's own sensors do not see (the adapter's loss, the display of an
// iMac, the fans of a Mac Pro, whatever else shares the plug).
//
// A plug is named by a URL (Parse) and identified by asking it (Open); a
// Plug gives one Reading at a time; a Meter polls it and answers the
// energy over any span of time, from the plug's own energy counter where
// the span holds enough of it and from its power readings elsewhere.
//
// A plug is a device on the network, not the user: everything it says
// is bounded (time, bytes), checked against what a Mac can draw, and
// made safe to print, and the credentials given for it never appear in
// what this package returns.
package wall

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/exopower/exopower/internal/power"
)

// Plug is a metered plug, identified and ready to read.
type Plug interface {
	// Info is what the plug is, as Open found it.
	Info() Info
	// Read asks the plug for one reading now. It returns within the
	// target's timeout (DefaultTimeout unless set), and at once after
	// Close.
	Read(ctx context.Context) (Reading, error)
	// Close ends any read under way and lets the plug's connections go.
	// It does not wait for the plug.
	Close() error
}

// Reading is what a plug says at one moment.
type Reading struct {
	// Power is the plug's power reading in watts, when HasPower.
	Power    float64
	HasPower bool
	// Counter is the plug's cumulative energy in joules, as the device
	// counts it (from its last reset, in its own resolution), when
	// HasCounter.
	Counter    float64
	HasCounter bool
	// OnBattery says the Mac ran from its battery (--wall adapter
	// alone): the wall gave it nothing, Power is 0, and the battery's
	// discharge is what it drew.
	OnBattery bool
	// Battery is the battery's flow in watts, above 0 while it charges
	// and below 0 while it discharges, when HasBattery (--wall adapter
	// alone).
	Battery    float64
	HasBattery bool
}

// Kinds of plug, as Info.Kind names them.
const (
	KindShellyGen2    = "shelly-gen2"
	KindShellyGen1    = "shelly-gen1"
	KindTasmota       = "tasmota"
	KindHomeAssistant = "home-assistant"
	KindKasa          = "kasa"
	// KindAdapter is no plug: a MacBook's adapter and battery, as macOS
	// reports them (adapter.go).
	KindAdapter = "adapter"
)

// Info is what a plug is.
type Info struct {
	// Kind is one of the Kind constants.
	Kind string
	// Model, Firmware and Name are as the device gives them, made safe
	// to print; any may be empty.
	Model, Firmware, Name string
	// Address is the plug's URL as exopower prints it: never with
	// credentials.
	Address string
	// CounterResolution is one count of the plug's energy counter, in
	// joules: a counter difference is exact to within one of them.
	CounterResolution float64
	// HasCounter and HasPower say what the plug's readings hold.
	HasCounter, HasPower bool
	// JudgesStale says the plug tells a stale reading itself (its Read
	// fails on one), and that its readings may repeat for a minute and
	// be fresh: the meter's rule for a stalled plug does not apply.
	JudgesStale bool
}

// Credentials are what a plug may ask for. They are sent to the plug's
// host alone, over the plug's own protocol (Shelly Gen2+: HTTP digest
// with SHA-256, user admin; Shelly Gen1: HTTP Basic; Tasmota: its query
// parameters user and password; Home Assistant: the token as a bearer),
// and are never printed nor part of an error.
type Credentials struct {
	User, Password, Token string
}

// DefaultTimeout bounds one request to a plug: a plug that hangs holds a
// command's end by less than a second.
const DefaultTimeout = 800 * time.Millisecond

// maxCounterJoules bounds a believable energy counter: 2.7 GWh, far more
// than a plug counts in its life.
const maxCounterJoules = 1e13

// AuthError is a plug that asks for credentials, or refused the ones
// given.
type AuthError struct {
	Address string
	Reason  string
}

func (e *AuthError) Error() string { return e.Address + ": " + e.Reason }

// UnsupportedError is a device that exopower recognises but cannot read:
// Reason says what to use instead.
type UnsupportedError struct {
	Address string
	Reason  string
}

func (e *UnsupportedError) Error() string { return e.Address + ": " + e.Reason }

// ErrClosed is the error of a read of a plug that was closed.
var ErrClosed = errors.New("the plug was closed")

// check refuses a reading that cannot be a Mac's at the wall.
func check(r Reading) error {
	if r.HasPower {
		switch p := r.Power; {
		case math.IsNaN(p) || math.IsInf(p, 0):
			return fmt.Errorf("its power reading is not a number")
		case p < 0:
			return fmt.Errorf("its power reading is negative (%g W): a Mac draws power, it gives none back; is the plug wired the other way round?", p)
		case p > power.MaxSystemWatts:
			return fmt.Errorf("its power reading, %g W, is more than any Mac draws (%d W): is something else on the plug?", p, power.MaxSystemWatts)
		}
	}
	if r.HasCounter {
		switch c := r.Counter; {
		case math.IsNaN(c) || math.IsInf(c, 0):
			return fmt.Errorf("its energy counter is not a number")
		case c < 0:
			return fmt.Errorf("its energy counter is negative (%g J)", c)
		case c > maxCounterJoules:
			return fmt.Errorf("its energy counter, %g J, is more than a plug counts in its life", c)
		}
	}
	if r.HasBattery && (math.IsNaN(r.Battery) || math.Abs(r.Battery) > power.MaxSystemWatts) {
		return fmt.Errorf("its battery's flow, %g W, is no battery's", r.Battery)
	}
	if !r.HasPower && !r.HasCounter {
		return fmt.Errorf("its answer holds neither power nor energy")
	}
	return nil
}
