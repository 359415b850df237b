package ioreport

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"
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
	if rec.otherPlug && rec.header.Wall != nil {
		return []string{"the file joins recordings of different plugs, or one without: the wall is from the first recording's plug alone, and the rest of the time is not covered"}
	}
	return nil
}
