package bench

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/exopower/exopower/internal/calibrate"
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
	// Wall is the plug that measured the runs at the wall (--wall);
	// null without.
	Wall *ReportWall `json:"wall"`

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

	cal *calibrate.Calibration // Config.Calibration, for the baseline's estimate at the wall
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

// Baseline is the idle power, from the pieces of every idle span (before
// the first run, in the cooldowns between runs, after the last) together,
// weighted by their lengths.
type Baseline struct {
	// DurationSeconds is the idle time measured, all spans together.
	DurationSeconds wire.Num `json:"duration_seconds"`
	PowerWatts      wire.Num `json:"power_watts"`
	// StandardErrorWatts is the standard error of PowerWatts, from the
	// spread of the pieces' powers; null when too few pieces give one.
	StandardErrorWatts *wire.Num `json:"standard_error_watts"`
	// SystemPowerWatts is the whole idle Mac's power, where the source
	// reads the SMC; null otherwise.
	SystemPowerWatts *wire.Num `json:"system_power_watts"`
	Before           *Idle     `json:"before"`
	// Between is the idle Mac measured in the latter half of each
	// cooldown between runs (--baseline auto with --cooldown); null
	// when none was.
	Between *Idle `json:"between"`
	// After is null when the bench was cut short before it.
	After *Idle `json:"after"`
	// Wall is the idle power at the wall, from every idle piece
	// (--wall); null without.
	Wall *IdleWall `json:"wall"`
	// WallEstimatedPowerWatts is the idle power at the wall estimated
	// from this Mac's calibration (of SystemPowerWatts where there is
	// one, else of PowerWatts), which the runs' net estimates are net
	// of; null without a calibration.
	WallEstimatedPowerWatts *wire.Num `json:"wall_estimated_power_watts"`
}

// Idle is one span of the idle Mac, measured in pieces back to back.
type Idle struct {
	StartedAt string `json:"started_at"`
	// DurationSeconds is the time the pieces measured.
	DurationSeconds wire.Num `json:"duration_seconds"`
	PowerWatts      wire.Num `json:"power_watts"`
	// StandardErrorWatts is the standard error of PowerWatts, from the
	// spread of the pieces' powers; null for fewer than two.
	StandardErrorWatts *wire.Num `json:"standard_error_watts"`
	// SystemPowerWatts is the whole idle Mac's power; null without the
	// system's power.
	SystemPowerWatts *wire.Num `json:"system_power_watts"`
	// Windows counts the source's windows over the span, Spans its
	// pieces, whose powers make its power and their spread its error.
	Windows int `json:"windows"`
	Spans   int `json:"spans"`

	pieces []Window // the pieces' lengths and powers, for Drifted
}

// Window is a piece of an idle span: its length and its average power,
// the SoC's, and the whole system's where HasSystem.
type Window struct {
	Seconds, Watts float64
	SystemWatts    float64
	HasSystem      bool
}

// systemPower is the pieces' system power, weighed by their lengths;
// nil unless every piece has it.
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

// NewIdle describes an idle span from its pieces. It is nil when none
// covered any time.
func NewIdle(spans []IdleSpan) *Idle {
	ws, windows := pieces(spans)
	m, se := weighted(ws)
	if math.IsNaN(m) {
		return nil
	}
	var secs float64
	for _, w := range ws {
		secs += w.Seconds
	}
	return &Idle{StartedAt: spans[0].Start.UTC().Format(time.RFC3339Nano), DurationSeconds: wire.Num(secs),
		PowerWatts: wire.Num(m), StandardErrorWatts: num(se), SystemPowerWatts: systemPower(ws), Windows: windows, Spans: len(ws), pieces: ws}
}

// NewBaseline pools the pieces of the idle spans before the first run,
// between runs and after the last. It is nil when there is no idle
// power before the runs.
func NewBaseline(before, between, after []IdleSpan) *Baseline {
	b := &Baseline{Before: NewIdle(before), Between: NewIdle(between), After: NewIdle(after)}
	ws, _ := pieces(slices.Concat(before, between, after))
	m, se := weighted(ws)
	if b.Before == nil || math.IsNaN(m) {
		return nil
	}
	for _, w := range ws {
		b.DurationSeconds += wire.Num(w.Seconds)
	}
	b.PowerWatts, b.StandardErrorWatts, b.SystemPowerWatts = wire.Num(m), num(se), systemPower(ws)
	b.Wall = NewIdleWall(slices.Concat(before, between, after))
	return b
}

// pieces are the spans that measured any time, and the source's windows
// over them.
func pieces(spans []IdleSpan) (ws []Window, windows int) {
	for _, s := range spans {
		if s.Seconds > 0 {
			ws, windows = append(ws, s.Window), windows+s.Windows
		}
	}
	return ws, windows
}

// weighted is the idle power, the pieces' powers weighed by their
// lengths, and its standard error from their spread.
func weighted(ws []Window) (mean, se float64) {
	v, w := make([]float64, len(ws)), make([]float64, len(ws))
	for i, x := range ws {
		v[i], w[i] = x.Watts, x.Seconds
	}
	return WeightedMean(v, w)
}

// Drifted says, when the idle power before the runs and after them
// differ beyond what the pieces' spread within each span lets chance
// do, that the Mac's background changed.
func (b *Baseline) Drifted() (string, bool) {
	if b == nil || b.After == nil {
		return "", false
	}
	if !Drift(b.Before.pieces, b.After.pieces) {
		return "", false
	}
	p1, p2 := float64(b.Before.PowerWatts), float64(b.After.PowerWatts)
	return fmt.Sprintf("the idle power before the runs (%s) and after them (%s) differ beyond their errors: "+
		"the Mac's background changed, and the net energies are less certain than they say", output.Watts(p1), output.Watts(p2)), true
}

// errorWatts is the idle power's standard error, 0 when unknown.
func (b *Baseline) errorWatts() float64 { return val(b.StandardErrorWatts) }

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
