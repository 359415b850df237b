package power

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// Rail is a component whose energy a source reads: the SoC's CPU, GPU
// and ANE, the memory (DRAM) and the whole system.
type Rail int

// The rails, in the order of Values (without its Total).
const (
	CPU Rail = iota
	GPU
	ANE
	DRAM
	System
	// NumRails is how many rails there are.
	NumRails
)

// String names the rail for people: CPU, GPU, ANE, DRAM, system.
func (r Rail) String() string { return [...]string{"CPU", "GPU", "ANE", "DRAM", "system"}[r] }

// Label names the rail in JSON and metrics: cpu, gpu, ane, dram, system.
func (r Rail) Label() string { return strings.ToLower(r.String()) }

// Of is the rail's number in v.
func (v Values) Of(r Rail) float64 { return [...]float64{v.CPU, v.GPU, v.ANE, v.DRAM, v.System}[r] }

// Has says whether c reported the rail.
func (c Reported) Has(r Rail) bool { return [...]bool{c.CPU, c.GPU, c.ANE, c.DRAM, c.System}[r] }

// The range of a sample interval that exopower takes, of its own
// --interval and of a node's. powermetrics samples no faster than every
// 10 ms and takes whole milliseconds; an hour is already far longer than
// any window worth reading live, and the bound keeps every sum of
// intervals (the waits for a first and a last window) far from overflow.
const (
	MinInterval = 10 * time.Millisecond
	MaxInterval = time.Hour
)

// MaxWindow bounds a window's length. A window can be long when the Mac
// slept, but a week-long window is a broken reading, and its energy,
// whatever it is, cannot be placed in it.
const MaxWindow = 7 * 24 * time.Hour

// MaxWatts bounds any power exopower believes of any Mac: the largest
// system bound of the table below (a Mac Pro's). A node's answers, whose
// Mac exopower does not know, are held to it.
const MaxWatts = MaxSystemWatts

// Bounds are the most that a Mac's rails can draw, in watts: a window
// whose power is beyond them is not a measurement.
//
// Each bound is twice the most that Apple publishes any Mac with that
// chip as drawing at the wall, rounded up: a rail of the SoC cannot draw
// more than the whole machine does, and twice leaves room for a model
// not yet published, a laptop drawing on its battery beside its adapter,
// and a reading's quantum in a short window. The figures (Apple's
// "power consumption and thermal output" pages of the Mac mini, Mac
// Studio and Mac Pro, maximum at the wall): M1 Mac mini 39 W, M2 50 W,
// M2 Pro about 100 W, M4 65 W, M4 Pro 140 W; Mac Studio M1 Max 115 W,
// M2 Max 145 W, M1 Ultra 215 W, M2 Ultra 295 W; Mac Pro (M2 Ultra)
// 330 W. The model identifiers come from Apple's "identify your Mac"
// pages (as everymac.com lists them).
type Bounds struct {
	// Chip names the Macs the bounds are for: "a Mac with an M1 to M5
	// Pro", or "any Mac" for a model not in the table.
	Chip string
	// SoC bounds each of CPU, GPU, ANE and DRAM, and the SoC's total.
	SoC float64
	// System bounds the whole Mac's (its SMC's PSTR).
	System float64
}

// The classes of chip, by the bound of each.
var (
	baseChip  = Bounds{Chip: "a Mac with a plain M1 to M5", SoC: 150, System: 300}
	proChip   = Bounds{Chip: "a Mac with an M1 to M5 Pro", SoC: 300, System: 600}
	maxChip   = Bounds{Chip: "a Mac with an M1 to M5 Max", SoC: 400, System: 800}
	ultraChip = Bounds{Chip: "a Mac with an M1 to M3 Ultra", SoC: 1000, System: 2000}
	// unknownMac is for a model exopower has no row for (a new one, or
	// none named): the largest chip's bounds.
	unknownMac = Bounds{Chip: "any Mac", SoC: 1000, System: MaxSystemWatts}
)

// chips maps each Apple Silicon Mac's model identifier (sysctl hw.model)
// to its chip's class. A model of two chips (a MacBook Pro sold with a
// Pro or a Max under one identifier) takes the larger.
var chips = map[string]*Bounds{
	// M1
	"MacBookAir10,1": &baseChip, "MacBookPro17,1": &baseChip, "Macmini9,1": &baseChip, "iMac21,1": &baseChip, "iMac21,2": &baseChip,
	"MacBookPro18,1": &proChip, "MacBookPro18,3": &proChip, "MacBookPro18,2": &maxChip, "MacBookPro18,4": &maxChip,
	"Mac13,1": &maxChip, "Mac13,2": &ultraChip,
	// M2
	"Mac14,2": &baseChip, "Mac14,15": &baseChip, "Mac14,7": &baseChip, "Mac14,3": &baseChip,
	"Mac14,12": &proChip, "Mac14,9": &proChip, "Mac14,10": &proChip, "Mac14,5": &maxChip, "Mac14,6": &maxChip,
	"Mac14,13": &maxChip, "Mac14,14": &ultraChip, "Mac14,8": &ultraChip,
	// M3
	"Mac15,3": &baseChip, "Mac15,4": &baseChip, "Mac15,5": &baseChip, "Mac15,12": &baseChip, "Mac15,13": &baseChip,
	"Mac15,6": &proChip, "Mac15,7": &proChip, "Mac15,8": &maxChip, "Mac15,9": &maxChip, "Mac15,10": &maxChip, "Mac15,11": &maxChip,
	"Mac15,14": &ultraChip,
	// M4
	"Mac16,1": &baseChip, "Mac16,2": &baseChip, "Mac16,3": &baseChip, "Mac16,10": &baseChip, "Mac16,12": &baseChip, "Mac16,13": &baseChip,
	"Mac16,7": &proChip, "Mac16,8": &proChip, "Mac16,11": &proChip, "Mac16,5": &maxChip, "Mac16,6": &maxChip, "Mac16,9": &maxChip,
	// M5
	"Mac17,2": &baseChip, "Mac17,8": &proChip, "Mac17,9": &proChip, "Mac17,6": &maxChip, "Mac17,7": &maxChip,
}

// BoundsOf are the bounds of the Mac whose model identifier is hwModel;
// a model exopower does not know, or none, gets the largest chip's.
func BoundsOf(hwModel string) Bounds {
	if b, ok := chips[hwModel]; ok {
		return *b
	}
	return unknownMac
}

// Of is the bound of rail r, in watts.
func (b Bounds) Of(r Rail) float64 {
	if r == System {
		return b.System
	}
	return b.SoC
}

// Check refuses a window whose power p (watts, over window) is negative,
// not a number, or beyond the bounds on a rail that has reports, or
// whose window is longer than MaxWindow: an *ImplausibleError that names
// the first such rail.
func (b Bounds) Check(p Values, has Reported, window time.Duration) error {
	if window > MaxWindow {
		return &ImplausibleError{Rail: -1, Window: window, Bounds: b}
	}
	for r := range NumRails {
		if !has.Has(r) {
			continue
		}
		if w := p.Of(r); !(w >= 0 && w <= b.Of(r)) {
			return &ImplausibleError{Rail: r, Watts: w, Window: window, Bounds: b}
		}
	}
	if !(p.Total >= 0 && p.Total <= b.SoC) {
		return &ImplausibleError{Rail: -1, Watts: p.Total, Window: window, Bounds: b, Total: true}
	}
	return nil
}

// ErrImplausible says that a reading cannot be true: a value negative,
// not a number, or beyond what the Mac can draw.
var ErrImplausible = errors.New("implausible value")

// ImplausibleError is a window refused because a rail's power in it is
// beyond what the Mac can draw (or negative), or because the window is
// longer than MaxWindow. It is a Refusal: the window never enters the
// ledger, and the stream goes on.
type ImplausibleError struct {
	// Rail is the rail whose power cannot be true; -1 for the window's
	// length or the SoC's total.
	Rail Rail
	// Watts is its power over the window.
	Watts  float64
	Window time.Duration
	Bounds Bounds
	// Total says the SoC's total is what is beyond its bound.
	Total bool
	// Detail says more of how the reading came to be refused, for
	// people: "its counter went back by 1.3e+06 J".
	Detail string
}

func (e *ImplausibleError) Error() string {
	var msg string
	switch {
	case e.Rail < 0 && !e.Total:
		msg = fmt.Sprintf("a window of %v is longer than the %v a window may last", e.Window.Round(time.Millisecond), MaxWindow)
	case e.Watts < 0 || math.IsNaN(e.Watts):
		msg = fmt.Sprintf("the %s reads %.4g W over %v, which no rail draws", e.name(), e.Watts, roundWindow(e.Window))
	default:
		msg = fmt.Sprintf("the %s reads %.4g W over %v, beyond the %.0f W that %s can draw", e.name(), e.Watts, roundWindow(e.Window), e.bound(), e.Bounds.Chip)
	}
	if e.Detail != "" {
		msg += " (" + e.Detail + ")"
	}
	return msg
}

func (e *ImplausibleError) name() string {
	if e.Total {
		return "SoC (CPU + GPU + ANE)"
	}
	return e.Rail.String()
}

func (e *ImplausibleError) bound() float64 {
	if e.Total {
		return e.Bounds.SoC
	}
	return e.Bounds.Of(e.Rail)
}

// roundWindow keeps a short window's length readable.
func roundWindow(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(time.Microsecond)
	}
	return d
}

func (e *ImplausibleError) Unwrap() error      { return ErrImplausible }
func (e *ImplausibleError) Reason() string     { return "implausible" }
func (e *ImplausibleError) Ends() bool         { return false }
func (e *ImplausibleError) Unmeasurable() bool { return false }
func (e *ImplausibleError) Cut() bool          { return false }

// RailOf is the rail that err refused a window for, and whether it names
// one.
func RailOf(err error) (Rail, bool) {
	var ie *ImplausibleError
	if errors.As(err, &ie) && ie.Rail >= 0 {
		return ie.Rail, true
	}
	return 0, false
}

// RailNote is what a source saw of one rail's counter in a window.
type RailNote struct {
	// Quirks are CounterFlat, CounterBatched or CounterStill, as the
	// rail's counter behaved.
	Quirks Quirk
	// Stood is how long the counter had stood still while the others
	// moved: at the window's end (still, stuck), or before it moved in
	// a step in the window (batched).
	Stood time.Duration
	// Glitches counts readings of the rail's counter that could not be
	// true and were dropped in the window: its energy across them is
	// taken from the readings on either side.
	Glitches int
}

// PeakPower is the window's power as a peak may count it: Peak where the
// source set it, else Power.
func (s *Sample) PeakPower() Values {
	if s.PeakSet {
		return s.Peak
	}
	return s.Power
}

// RailHealth is what exopower refused to believe of one rail over a span
// or a stream.
type RailHealth struct {
	// Refused counts the windows refused because the rail's power in
	// them could not be true.
	Refused int
	// Glitches counts the readings of the rail dropped as bogus (a lone
	// 0, a step and back), bridged by the readings on either side.
	Glitches int
	// Stood is the longest the rail's counter stood still while the
	// others moved.
	Stood time.Duration
}

// Health is each rail's, in Rail order.
type Health [NumRails]RailHealth

// Note adds a window's notes to h.
func (h *Health) Note(notes *[NumRails]RailNote) {
	for r := range h {
		h[r].Glitches += notes[r].Glitches
		h[r].Stood = max(h[r].Stood, notes[r].Stood)
	}
}

// Refuse counts a window refused for err, on its rail where it names one.
func (h *Health) Refuse(err error) {
	if r, ok := RailOf(err); ok {
		h[r].Refused++
	}
}
