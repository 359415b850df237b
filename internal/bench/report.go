package bench

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/wire"
)

// Report is the JSON of exopower bench (--json, --export-json). Its
// shape is the same whatever the flags: what a flag leaves out is null.
type Report struct {
	SchemaVersion int `json:"schema_version"`
	// Type is "bench".
	Type string `json:"type"`
	// Complete is false when the bench was cut short (Ctrl-C, a failed
	// command): the results hold the runs made by then.
	Complete        bool        `json:"complete"`
	IntervalSeconds wire.Num    `json:"interval_seconds"`
	Scope           string      `json:"scope"`
	Source          wire.Source `json:"source"`
	// Baseline is the idle Mac measured before the first run and after
	// the last; null with --baseline 0.
	Baseline *Baseline `json:"baseline"`
	// Reference is the index in Results of the command the others are
	// compared with; null with no run to compare.
	Reference *int `json:"reference"`
	// Unit names the unit of work (--unit) that runs' units count; null
	// without --units or --units-from.
	Unit     *string  `json:"unit"`
	Results  []Result `json:"results"`
	Warnings []string `json:"warnings"`

	// TimeUnit is the unit of the times that the text and the tables
	// show (-u/--time-unit): TimeSecond, TimeMillisecond or
	// TimeMicrosecond; "" chooses by the first command's mean, as
	// hyperfine does. The JSON's and the CSV's times are in seconds.
	TimeUnit string `json:"-"`
	// Sort is the order of the commands in the comparison and in the
	// tables (--sort): SortAuto (or "") puts the comparison in order of
	// mean energy and the tables in the commands' order, SortCommand
	// both in the commands' order, SortMean both in order of mean
	// energy.
	Sort string `json:"-"`
}

// The values of Report.TimeUnit, hyperfine's names.
const (
	TimeSecond      = "second"
	TimeMillisecond = "millisecond"
	TimeMicrosecond = "microsecond"
)

// The values of Report.Sort: hyperfine's, but that the mean is the
// energy's ("mean-time", hyperfine's name, is taken for it too).
const (
	SortAuto    = "auto"
	SortCommand = "command"
	SortMean    = "mean-energy"
)

// Baseline is the idle power, from the windows of both idle spans
// together, weighted by their lengths.
type Baseline struct {
	DurationSeconds wire.Num `json:"duration_seconds"`
	PowerWatts      wire.Num `json:"power_watts"`
	// StandardErrorWatts is the standard error of PowerWatts; null when
	// too few windows give one.
	StandardErrorWatts *wire.Num `json:"standard_error_watts"`
	// SystemPowerWatts is the whole idle Mac's power, where the source
	// reads the SMC; null otherwise.
	SystemPowerWatts *wire.Num `json:"system_power_watts"`
	Before           *Idle     `json:"before"`
	// After is null when the bench was cut short before it.
	After *Idle `json:"after"`
}

// Idle is one span of the idle Mac.
type Idle struct {
	StartedAt          string    `json:"started_at"`
	DurationSeconds    wire.Num  `json:"duration_seconds"`
	PowerWatts         wire.Num  `json:"power_watts"`
	StandardErrorWatts *wire.Num `json:"standard_error_watts"`
	// SystemPowerWatts is the whole idle Mac's power; null without the
	// system's power.
	SystemPowerWatts *wire.Num `json:"system_power_watts"`
	Windows          int       `json:"windows"`

	// whole is the power of the windows that StandardErrorWatts is read
	// from, those not cut short: what is compared with another span's.
	whole float64
}

// Window is a window's part within an idle span: its length and its
// average power, the SoC's, and the whole system's where HasSystem.
type Window struct {
	Seconds, Watts float64
	SystemWatts    float64
	HasSystem      bool
}

// systemPower is the windows' system power, weighed by their lengths;
// nil unless every window has it.
func systemPower(ws []Window) *wire.Num {
	var joules, secs float64
	for _, w := range ws {
		if !w.HasSystem {
			return nil
		}
		joules, secs = joules+w.SystemWatts*w.Seconds, secs+w.Seconds
	}
	if secs <= 0 {
		return nil
	}
	return num(joules / secs)
}

// NewIdle describes an idle span from its windows. It is nil when no
// window covered any of it.
func NewIdle(started time.Time, d time.Duration, ws []Window) *Idle {
	m, whole, se := weighted(ws)
	if math.IsNaN(m) {
		return nil
	}
	return &Idle{StartedAt: started.UTC().Format(time.RFC3339Nano), DurationSeconds: wire.Num(d.Seconds()),
		PowerWatts: wire.Num(m), StandardErrorWatts: num(se), SystemPowerWatts: systemPower(ws), Windows: len(ws), whole: whole}
}

// NewBaseline pools the windows of both idle spans. It is nil when there
// is no idle power.
func NewBaseline(before, after *Idle, ws []Window) *Baseline {
	m, _, se := weighted(ws)
	if before == nil || math.IsNaN(m) {
		return nil
	}
	b := &Baseline{DurationSeconds: before.DurationSeconds, PowerWatts: wire.Num(m), StandardErrorWatts: num(se),
		SystemPowerWatts: systemPower(ws), Before: before, After: after}
	return b
}

// Drifted says, when the idle power before the runs and after them
// differ beyond their errors, that the Mac's background changed. The
// powers compared are those of the windows that the errors are read
// from: a window cut short at an edge has a power from a few whole
// millijoules, off by more than the errors of whole windows say.
func (b *Baseline) Drifted() (string, bool) {
	if b == nil || b.After == nil {
		return "", false
	}
	if !Differ(b.Before.whole, val(b.Before.StandardErrorWatts), b.After.whole, val(b.After.StandardErrorWatts)) {
		return "", false
	}
	p1, p2 := float64(b.Before.PowerWatts), float64(b.After.PowerWatts)
	return fmt.Sprintf("the idle power before the runs (%s) and after them (%s) differ beyond their errors: "+
		"the Mac's background changed, and the net energies are less certain than they say", output.Watts(p1), output.Watts(p2)), true
}

// errorWatts is the idle power's standard error, 0 when unknown.
func (b *Baseline) errorWatts() float64 { return val(b.StandardErrorWatts) }

// weighted is the idle power, the windows' powers weighed by their
// length within the span; whole, the same of the windows of at least half
// the median length only; and its standard error. The error is read from
// those whole windows: a window cut short, as where a span's edge asked
// for a sample, has its power from a few whole millijoules, whose
// rounding would read as noise of the Mac. (Its energy, exact to the
// millijoule, still counts in the mean.)
func weighted(ws []Window) (mean, whole, se float64) {
	v, w := make([]float64, len(ws)), make([]float64, len(ws))
	lengths := make([]float64, len(ws))
	for i, x := range ws {
		v[i], w[i], lengths[i] = x.Watts, x.Seconds, x.Seconds
	}
	mean, _ = WeightedMean(v, w)
	slices.Sort(lengths)
	var fv, fw []float64
	for i, x := range ws {
		if len(lengths) > 0 && x.Seconds >= lengths[(len(lengths)-1)/2]/2 {
			fv, fw = append(fv, v[i]), append(fw, w[i])
		}
	}
	whole, se = WeightedMean(fv, fw)
	return mean, whole, se
}

// num is x for JSON; nil (null) for NaN.
func num(x float64) *wire.Num {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	n := wire.Num(x)
	return &n
}

func val(n *wire.Num) float64 {
	if n == nil {
		return 0
	}
	return float64(*n)
}
