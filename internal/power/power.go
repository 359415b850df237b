// Package power holds what a source of power readings hands the rest of
// exopower, in no source's own terms: the components' power and energy
// (Values), which components a reading reported, one reading of a
// window (Sample), and how a stream says that a reading was refused or
// that it broke off. powermetrics produces these; so will any other
// source. Nothing here knows a source's format.
package power

import (
	"errors"
	"fmt"
	"time"
)

// Values holds one number per component of the SoC, and their total. Its
// unit is given by the field that holds it (watts for Sample.Power,
// joules for Sample.Energy).
type Values struct {
	CPU, GPU, ANE float64
	// Total is CPU + GPU + ANE, as Summed makes it; a source's own total
	// (powermetrics's combined_power) is Sample.CombinedPower.
	Total float64
}

// Summed returns v with Total set to the sum of its components: the one
// place where the components add up to a total.
func (v Values) Summed() Values {
	v.Total = v.CPU + v.GPU + v.ANE
	return v
}

// Scale returns every component multiplied by k.
func (v Values) Scale(k float64) Values {
	return Values{v.CPU * k, v.GPU * k, v.ANE * k, v.Total * k}
}

// Add returns the component-wise sum: of two windows, two spans or two
// nodes alike.
func (v Values) Add(w Values) Values {
	return Values{v.CPU + w.CPU, v.GPU + w.GPU, v.ANE + w.ANE, v.Total + w.Total}
}

// Sub returns the component-wise difference v - w.
func (v Values) Sub(w Values) Values {
	return Values{v.CPU - w.CPU, v.GPU - w.GPU, v.ANE - w.ANE, v.Total - w.Total}
}

// Max returns the component-wise maximum.
func (v Values) Max(w Values) Values {
	return Values{max(v.CPU, w.CPU), max(v.GPU, w.GPU), max(v.ANE, w.ANE), max(v.Total, w.Total)}
}

// Reported says which parts of the SoC a reading reported.
type Reported struct {
	CPU, GPU, ANE bool
}

// Or returns the components that either reported.
func (c Reported) Or(d Reported) Reported {
	return Reported{c.CPU || d.CPU, c.GPU || d.GPU, c.ANE || d.ANE}
}

// Sample is one reading of a source: the averages over one window.
type Sample struct {
	// Index is the reading's position in the stream, from 0.
	Index int
	// Arrival is when the reading arrived, on the monotonic clock the
	// source was given. The window it describes is [Arrival - Window,
	// Arrival], less the source's delay in handing it over.
	Arrival time.Time
	// Window is the length of the window.
	Window time.Duration
	// Power is the average power over the window, in watts.
	Power Values
	// Energy is the energy of the window, in joules.
	Energy Values
	// Has says which components the reading reported; the others are 0.
	Has Reported
	// ThermalPressure is Nominal, Light, Moderate, Heavy or Critical, or
	// empty when the source does not say.
	ThermalPressure string
	// HWModel is the machine's model identifier, such as Mac14,14.
	HWModel string
	// OSBuild is the macOS build, such as 24F74.
	OSBuild string
	// Timestamp is the reading's own date, where the source writes one
	// (powermetrics: whole seconds only).
	Timestamp time.Time
	// CombinedPower is the source's own total in watts, or 0 where it
	// has none; Power.Total is the sum of the components themselves.
	CombinedPower float64
	// CombinedDisagrees reports that CombinedPower differs from the sum
	// of the components by more than the rounding of the numbers written.
	CombinedDisagrees bool
}

// Refusal is the error a source returns for a reading it could not use.
// Unless it Ends the stream, the stream goes on without that reading's
// window.
type Refusal interface {
	error
	// Reason names why, in a word, for counting: such as truncated or
	// malformed.
	Reason() string
	// Ends says that the stream cannot go on after it.
	Ends() bool
	// Unmeasurable says that the stream holds nothing exopower can
	// measure (no power data at all, or another machine's format): as
	// the first reading, it is the stream's failure, not a lost window.
	Unmeasurable() bool
	// Cut says that the reading was cut short: before any reading was
	// usable, that is how the stream ended, not a lost window.
	Cut() bool
}

// BreakError says that the stream broke off and began again (its source
// was started again): the time from its last window to the first of the
// new stream was not measured. The stream goes on after it.
type BreakError struct {
	// Source names the source, for people: powermetrics.
	Source string
	// Err is how the stream before the break ended.
	Err error
}

func (e *BreakError) Error() string {
	return fmt.Sprintf("%s stopped (%v) and was started again", e.Source, e.Err)
}

func (e *BreakError) Unwrap() error { return e.Err }

// NoSampleError says that a source produced no reading in time.
type NoSampleError struct {
	// Source names the source, for people: powermetrics.
	Source string
	Waited time.Duration
}

func (e *NoSampleError) Error() string {
	return fmt.Sprintf("%s produced no sample in %v", e.Source, e.Waited.Round(time.Millisecond))
}

// EndsStream reports whether an error from a source ends its stream:
// anything but a break, or a refused reading that lets the stream go on.
func EndsStream(err error) bool {
	var r Refusal
	var be *BreakError
	return err != nil && (!errors.As(err, &r) || r.Ends()) && !errors.As(err, &be)
}
