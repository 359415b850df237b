package ioreport

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/exopower/exopower/internal/safe"
)

// PlugInfo is the metered plug a recording holds the readings of
// (record --wall), in its header: what exopower needs to measure the wall
// from them again (the counter's resolution), and what to name it by.
type PlugInfo struct {
	Kind                    string  `json:"kind"`
	Model                   string  `json:"model"`
	Firmware                string  `json:"firmware"`
	Name                    string  `json:"name"`
	Address                 string  `json:"address"`
	CounterResolutionJoules float64 `json:"counter_resolution_joules"`
	HasCounter              bool    `json:"has_counter"`
	HasPower                bool    `json:"has_power"`
	IntervalSeconds         float64 `json:"interval_seconds"`
}

// Bounds of a plug in a recording's header: a plug is read at least
// every hour and at most ten times a second, and counts at most in whole
// kilowatt-hours (a Tasmota at EnergyRes 0).
const (
	minPlugInterval   = 0.1
	maxPlugInterval   = 3600.0
	maxPlugResolution = 3.6e6
)

// check refuses a plug that no recording of exopower's names (a nil one
// is none), and makes its text safe to print.
func (p *PlugInfo) check() error {
	if p == nil {
		return nil
	}
	switch r := p.CounterResolutionJoules; {
	case !(p.IntervalSeconds >= minPlugInterval && p.IntervalSeconds <= maxPlugInterval):
		return fmt.Errorf("interval_seconds %v is outside [%g, %g]", p.IntervalSeconds, minPlugInterval, maxPlugInterval)
	case p.HasCounter && !(r > 0 && r <= maxPlugResolution):
		return fmt.Errorf("counter_resolution_joules %v is outside (0, %g]", r, maxPlugResolution)
	case !p.HasCounter && r != 0:
		return fmt.Errorf("counter_resolution_joules %v without a counter", r)
	case !p.HasCounter && !p.HasPower:
		return fmt.Errorf("has neither a counter nor a power")
	}
	p.Kind, p.Model, p.Firmware, p.Name, p.Address = safe.Text(p.Kind), safe.Text(p.Model), safe.Text(p.Firmware), safe.Text(p.Name), safe.Text(p.Address)
	return nil
}

// maxPlugReadings bounds the plug's readings a recording's are kept of:
// a week at a second, 48 MiB; the rest are left out, and said to be.
const maxPlugReadings = 1 << 20

// PlugReading is one good reading of the plug, placed on the recording's
// timeline as its IOReport readings are.
type PlugReading struct {
	At                   time.Time
	Power, Counter       float64
	HasPower, HasCounter bool
}

// PlugType is the "type" of a plug's reading's line.
const PlugType = "wall"

// plugSchema is the schema_version of a recording that holds a plug's
// readings: an exopower that reads version 1 alone would take their
// lines for readings without channels, and refuses it instead.
const plugSchema = 2

// PlugLine is the line of a plug's reading taken at, which the recording's
// readings count from origin.
func PlugLine(r PlugReading, origin time.Time) []byte {
	b := fmt.Appendf(nil, `{"type":%q,"mono_ns":%d,"unix_ns":%d`, PlugType, r.At.Sub(origin).Nanoseconds(), r.At.UnixNano())
	if r.HasPower {
		b = append(append(b, `,"power_w":`...), strconv.FormatFloat(r.Power, 'g', -1, 64)...)
	}
	if r.HasCounter {
		b = append(append(b, `,"counter_j":`...), strconv.FormatFloat(r.Counter, 'g', -1, 64)...)
	}
	return append(b, "}\n"...)
}

// plugLine is a plug's reading's line as it is read.
type plugLine struct {
	MonoNS  int64    `json:"mono_ns"`
	Power   *float64 `json:"power_w"`
	Counter *float64 `json:"counter_j"`
}

// parsePlug reads a plug's reading's line, placed on the timeline of the
// readings before it; one before any reading, or whose numbers cannot be
// numbers, is an error.
func (rec *Recording) parsePlug(b []byte) error {
	var l plugLine
	if err := json.Unmarshal(b, &l); err != nil {
		return err
	}
	if rec.header.Wall == nil {
		return fmt.Errorf("a plug's reading, and no plug in the header")
	}
	if rec.otherPlug {
		return nil // another plug's: not the header's
	}
	if len(rec.plug) >= maxPlugReadings {
		rec.plugLeftOut++
		return nil
	}
	if rec.origin.IsZero() {
		return fmt.Errorf("a plug's reading before the first reading: it has no place on the timeline")
	}
	r := PlugReading{At: rec.origin.Add(time.Duration(l.MonoNS))}
	if l.Power != nil {
		r.Power, r.HasPower = *l.Power, true
	}
	if l.Counter != nil {
		r.Counter, r.HasCounter = *l.Counter, true
	}
	if math.IsNaN(r.Power) || math.IsInf(r.Power, 0) || math.IsNaN(r.Counter) || math.IsInf(r.Counter, 0) || (!r.HasPower && !r.HasCounter) {
		return fmt.Errorf("a plug's reading without a power or an energy that is a number")
	}
	if n := len(rec.plug); n > 0 && !r.At.After(rec.plug[n-1].At) {
		// A plug's readings come in the order they were taken: one
		// that goes back cannot be placed, and is left out.
		rec.plugLeftOut++
		return nil
	}
	rec.plug = append(rec.plug, r)
	return nil
}

// Plug is the recording's plug and its readings, once the recording is
// read; nil where it holds none.
func (rec *Recording) Plug() (*PlugInfo, []PlugReading) { return rec.header.Wall, rec.plug }

// joinPlug notes a recording joined on (its header b) whose plug is not
// the first's: its plug's readings are left out.
func (rec *Recording) joinPlug(b []byte) {
	var h Header
	json.Unmarshal(b, &h)
	first, joined := rec.header.Wall, h.Wall
	if (first == nil) != (joined == nil) || (first != nil && *first != *joined) {
		rec.otherPlug = true
	}
}

// plugWarnings say what of the plug's readings was left out.
func (rec *Recording) plugWarnings() []string {
	var ws []string
	if rec.otherPlug && rec.header.Wall != nil {
		ws = append(ws, "the file joins recordings of different plugs, or one without: the wall is from the first recording's plug alone, and the rest of the time is not covered")
	}
	if rec.plugLeftOut > 0 {
		ws = append(ws, fmt.Sprintf("%d of the plug's readings were left out: taken before the one before them, or past the %d kept", rec.plugLeftOut, maxPlugReadings))
	}
	return ws
}
