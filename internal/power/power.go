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
	"strings"
	"time"
)

// Values holds one number per component of the SoC, their total, the
// memory's and the whole system's. Its unit is given by the field that
// holds it (watts for Sample.Power, joules for Sample.Energy).
type Values struct {
	CPU, GPU, ANE float64
	// Total is CPU + GPU + ANE, as Summed makes it; a source's own total
	// (powermetrics's combined_power) is Sample.CombinedPower.
	Total float64
	// DRAM is the memory's, where the source reports it (Reported.DRAM).
	DRAM float64
	// System is the whole machine's as the SMC reports it (PSTR), where
	// the source reports it (Reported.System): the SoC, memory, display,
	// storage and the rest. It is not part of Total.
	System float64
}

// Summed returns v with Total set to the sum of its components: the one
// place where the components add up to a total.
func (v Values) Summed() Values {
	v.Total = v.CPU + v.GPU + v.ANE
	return v
}

// Scale returns every component multiplied by k.
func (v Values) Scale(k float64) Values {
	return Values{v.CPU * k, v.GPU * k, v.ANE * k, v.Total * k, v.DRAM * k, v.System * k}
}

// Add returns the component-wise sum: of two windows, two spans or two
// nodes alike.
func (v Values) Add(w Values) Values {
	return Values{v.CPU + w.CPU, v.GPU + w.GPU, v.ANE + w.ANE, v.Total + w.Total, v.DRAM + w.DRAM, v.System + w.System}
}

// Sub returns the component-wise difference v - w.
func (v Values) Sub(w Values) Values {
	return Values{v.CPU - w.CPU, v.GPU - w.GPU, v.ANE - w.ANE, v.Total - w.Total, v.DRAM - w.DRAM, v.System - w.System}
}

// Max returns the component-wise maximum.
func (v Values) Max(w Values) Values {
	return Values{max(v.CPU, w.CPU), max(v.GPU, w.GPU), max(v.ANE, w.ANE), max(v.Total, w.Total),
		max(v.DRAM, w.DRAM), max(v.System, w.System)}
}

// Array is v's numbers in a fixed order (CPU, GPU, ANE, Total, DRAM,
// System), for code that treats every component alike.
func (v Values) Array() [6]float64 {
	return [6]float64{v.CPU, v.GPU, v.ANE, v.Total, v.DRAM, v.System}
}

// FromArray is the Values whose Array is a.
func FromArray(a [6]float64) Values {
	return Values{CPU: a[0], GPU: a[1], ANE: a[2], Total: a[3], DRAM: a[4], System: a[5]}
}

// MaxSystemWatts bounds a believable system power: a Mac Pro's supply
// gives about 1,400 W.
const MaxSystemWatts = 2000

// Reported says which components a reading reported.
type Reported struct {
	CPU, GPU, ANE, DRAM, System bool
}

// Or returns the components that either reported.
func (c Reported) Or(d Reported) Reported {
	return Reported{c.CPU || d.CPU, c.GPU || d.GPU, c.ANE || d.ANE, c.DRAM || d.DRAM, c.System || d.System}
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
	// Quirks are what the source saw in the window that a reader of its
	// numbers should know: every rail's, and the system raised.
	Quirks Quirk
	// Rails are what the source saw of each rail's counter.
	Rails [NumRails]RailNote
	// Peak, where PeakSet, is the window's power as a span's peak may
	// count it, where Power over the window alone is no power a rail
	// drew: a batch of a counter landed in it (counted over the time it
	// accrued), or the window is too short for a count of a counter to
	// be a power.
	Peak    Values
	PeakSet bool
	// Notes say what the source dropped or judged in the window, for the
	// warnings of the spans it reaches into: rare, and nil otherwise.
	Notes []string
}

// Quirk is something a source saw in a window that a reader of its
// numbers should know: a span counts its windows with each, and says so,
// naming the rails (Sample.Rails) that had it.
type Quirk uint8

// The quirks a window can have.
const (
	// SystemRaised: the system's energy came out below the SoC's and the
	// memory's own in the window (the SMC's reading lags the counters),
	// and theirs was taken for it.
	SystemRaised Quirk = 1 << iota
	// CounterFlat: an energy counter did not move for more than a batch
	// (3 s) while the others and the system's power did (stuck): its
	// component reads 0 for the window.
	CounterFlat
	// CounterBatched: the counters moved in a step after windows in which
	// they did not, as when macOS publishes them in batches: the energy is
	// right over the batch, not placed within it.
	CounterBatched
	// CounterStill: a counter did not move while the others did, for
	// less time than makes it stuck: a batch not yet published, whose
	// energy comes in a later window.
	CounterStill
)

// Quirks are every quirk, in order.
var Quirks = []Quirk{SystemRaised, CounterFlat, CounterBatched, CounterStill}

// HabitRails are the rails whose counters' habits (still, batched,
// stuck) are judged: those that draw power whenever the Mac is on. The
// GPU and the ANE draw nothing when idle, and their counters then stand
// still as they should.
var HabitRails = []Rail{CPU, DRAM}

// QuirkTally counts a span's windows with each quirk, and how long each
// rail's counter stood still at most, for its warnings.
type QuirkTally struct {
	// Windows counts the windows with each quirk, in the order of Quirks.
	Windows [8]int
	// Stood is, per rail and quirk (in the order of Quirks), the longest
	// the rail's counter stood still in a window with that quirk; zero
	// where the rail never had it.
	Stood [NumRails][8]time.Duration
}

// Add counts the quirks of s.
func (t *QuirkTally) Add(s *Sample) {
	for i, q := range Quirks {
		if s.Quirks&q == 0 {
			continue
		}
		t.Windows[i]++
		for r := range NumRails {
			if n := &s.Rails[r]; n.Quirks&q != 0 {
				t.Stood[r][i] = max(t.Stood[r][i], n.Stood, time.Nanosecond)
			}
		}
	}
}

// Warnings say what a span's windows with each quirk mean, naming the
// rails and how long they stood still. Windows in which a counter stood
// still are said only when nothing else explains them: a span that saw
// the batch land, or the counter stuck, says that instead.
func (t *QuirkTally) Warnings() []string {
	var ws []string
	for i, q := range Quirks {
		n := t.Windows[i]
		if n == 0 || q == CounterStill && (t.Windows[1] > 0 || t.Windows[2] > 0) {
			continue
		}
		who, long := t.stood(i)
		ws = append(ws, q.explain(n, who, long))
	}
	return ws
}

// stood names the rails that had the i-th quirk and how long they stood
// still at most: "the CPU's energy counter" "3.0 s", or, of two rails,
// "the CPU's (3.0 s) and the DRAM's (2.1 s) energy counters".
func (t *QuirkTally) stood(i int) (who, long string) {
	var names, longs []string
	for r := range NumRails {
		if d := t.Stood[r][i]; d > 0 {
			names = append(names, "the "+r.String()+"'s")
			longs = append(longs, fmt.Sprintf("%.1f s", d.Seconds()))
		}
	}
	switch len(names) {
	case 0:
		return "the energy counters", ""
	case 1:
		return names[0] + " energy counter", longs[0]
	}
	for k := range names {
		names[k] += " (" + longs[k] + ")"
	}
	return strings.Join(names, " and ") + " energy counters", ""
}

// explain says what n of a span's windows with q mean, for its warnings;
// who names the rails, and long how long one stood still, where known.
func (q Quirk) explain(n int, who, long string) string {
	windows := fmt.Sprintf("%d windows", n)
	if n == 1 {
		windows = "1 window"
	}
	it, its, reads := "it", "its", "it reads"
	if strings.HasSuffix(who, "counters") {
		it, its, reads = "them", "their", "they read"
	}
	stood := ""
	if long != "" {
		stood = " for " + long
	}
	switch q {
	case SystemRaised:
		return "in " + windows + " the system's energy from the SMC came out below the SoC's and the memory's own (its reading lags the counters): theirs was taken for the system's there"
	case CounterFlat:
		return who + " stood still" + stood + " while the others and the system's power moved (stuck, as on some macOS versions): " + reads + " 0 there, and " + its + " energy over that time is not measured"
	case CounterBatched:
		return "in " + windows + " " + who + " moved in a step after standing still" + stood + " (macOS publishes " + it + " in batches): the energy is right over each batch, but a span shorter than it may see it early or late, and the power of the window where it landed (the peak among them) is the batch's, not the moment's"
	case CounterStill:
		return "in " + windows + " " + who + " did not move while the others did" + stood + " (macOS publishes some counters in batches about 2 s apart): " + its + " energy comes in a later window, so a span this short may read too little of it; measure for several seconds"
	}
	return fmt.Sprintf("in %s: quirk %d", windows, q)
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
