// Package powermetrics runs Apple's powermetrics and decodes its stream.
//
// powermetrics -f plist writes one XML property list per sample window,
// each after the first preceded by a NUL byte. The Decoder reads that
// stream from any io.Reader and yields one typed Sample per document as
// soon as its closing </plist> arrives, stamped with the monotonic time of
// its arrival. Start runs powermetrics itself with the flags exopower
// needs. Nothing here reads the environment or writes to the terminal:
// the caller decides what to do with samples and errors.
package powermetrics

import (
	"errors"
	"fmt"
	"time"
)

// Values holds one number per component of the SoC. Its unit is given by
// the field that holds it (watts for Sample.Power, joules for
// Sample.Energy).
type Values struct {
	CPU, GPU, ANE float64
	// Total is CPU + GPU + ANE, the sum of the components shown.
	// powermetrics's own combined_power is Sample.CombinedPower.
	Total float64
}

// Scale returns every component multiplied by k.
func (v Values) Scale(k float64) Values {
	return Values{v.CPU * k, v.GPU * k, v.ANE * k, v.Total * k}
}

// Add returns the component-wise sum.
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

// Reported says which parts of the SoC a document reported.
type Reported struct {
	CPU, GPU, ANE bool
}

// Or returns the components that either reported.
func (c Reported) Or(d Reported) Reported {
	return Reported{c.CPU || d.CPU, c.GPU || d.GPU, c.ANE || d.ANE}
}

// Sample is one decoded powermetrics document: the averages over one
// sample window.
type Sample struct {
	// Index is the document's position in the stream, from 0.
	Index int
	// Arrival is when the document's closing tag was read, on the
	// monotonic clock the Decoder was given. The window it describes is
	// [Arrival - Window, Arrival], less the delay of the pipe.
	Arrival time.Time
	// Window is the length of the sample window (elapsed_ns).
	Window time.Duration
	// Power is the average power over the window, in watts.
	Power Values
	// Energy is the energy of the window, in joules: the *_energy keys
	// (whole millijoules) where the document has them, else Power x
	// Window.
	Energy Values
	// Has says which components the document reported; the others are 0.
	Has Reported
	// ThermalPressure is Nominal, Light, Moderate, Heavy or Critical, or
	// empty when the thermal sampler did not run.
	ThermalPressure string
	// HWModel is the machine's model identifier, such as Mac14,14.
	HWModel string
	// OSBuild is the macOS build, such as 24F74 (kern_osversion).
	OSBuild string
	// Timestamp is the document's own date, with whole seconds only.
	Timestamp time.Time
	// CombinedPower is the document's combined_power in watts, or 0 where
	// it has none. powermetrics writes it as CPU + GPU + ANE rounded to
	// six digits; Power.Total is that sum from the components themselves.
	CombinedPower float64
	// CombinedDisagrees reports that CombinedPower differs from
	// CPU + GPU + ANE by more than the rounding of the numbers written.
	CombinedDisagrees bool
}

// Errors a document can be refused with, wrapped in a *DocumentError.
var (
	// ErrNoPowerData: the document has no cpu_power or gpu_power data,
	// as inside a virtual machine or with other samplers.
	ErrNoPowerData = errors.New("no CPU, GPU or ANE power data (samplers cpu_power and gpu_power did not run, or this is a virtual machine)")
	// ErrIntel: the document is in an Intel Mac's format (package_watts).
	ErrIntel = errors.New("an Intel Mac's format (processor.package_watts): exopower measures Apple Silicon only")
	// ErrTruncated: the document was cut short before its </plist>: the
	// stream ended, or another document began (powermetrics restarted,
	// or two recordings were joined).
	ErrTruncated = errors.New("truncated")
	// ErrTooLarge: the document is longer than MaxDocumentSize, however
	// its bytes arrived. powermetrics writes a few hundred KB at most.
	ErrTooLarge = fmt.Errorf("larger than %d MiB, where powermetrics writes at most a few hundred KB: not a powermetrics document", MaxDocumentSize>>20)
	// ErrMalformed: the document is not a well-formed XML property list.
	ErrMalformed = errors.New("malformed plist")
	// ErrTooDeep: the document's elements nest deeper than MaxNesting.
	ErrTooDeep = fmt.Errorf("%w: nested more than %d levels deep, where powermetrics nests about 10", ErrMalformed, MaxNesting)
	// ErrImplausible: a value is negative, not a number, or beyond
	// what an SoC can draw.
	ErrImplausible = errors.New("implausible value")
)

// EndsStream reports whether an error from a Decoder's Next ends the
// stream: anything but a refused document or a break (a powermetrics
// started again), and a document too large to find the end of. After a
// refused document or a break the stream goes on.
func EndsStream(err error) bool {
	var de *DocumentError
	var be *BreakError
	return err != nil && (!errors.As(err, &de) || errors.Is(err, ErrTooLarge)) && !errors.As(err, &be)
}

// DocumentError says which document of a stream was refused and why.
type DocumentError struct {
	Index int
	Err   error
}

func (e *DocumentError) Error() string { return fmt.Sprintf("document %d: %v", e.Index, e.Err) }
func (e *DocumentError) Unwrap() error { return e.Err }
