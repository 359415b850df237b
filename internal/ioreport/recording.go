package ioreport

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/exopower/exopower/internal/power"
)

// RecordingType is the "type" of a recording's first line.
const RecordingType = "ioreport-recording"

// Header is a recording's first line.
type Header struct {
	Type            string  `json:"type"` // RecordingType
	SchemaVersion   int     `json:"schema_version"`
	HWModel         string  `json:"hw_model"`
	OSBuild         string  `json:"os_build"`
	IntervalSeconds float64 `json:"interval_seconds"`
	// Wall is the metered plug whose readings the recording holds too
	// (record --wall); absent where it holds none.
	Wall *PlugInfo `json:"wall,omitempty"`
}

// line is a reading as a recording holds it: each channel as [group,
// subgroup, name, unit label, raw cumulative integer], and the SMC's keys
// decoded (no smc where the SMC did not answer).
type line struct {
	// Type is set on a header only: another recording, joined on.
	Type     string             `json:"type,omitempty"`
	MonoNS   int64              `json:"mono_ns"`
	UnixNS   int64              `json:"unix_ns"`
	Channels []json.RawMessage  `json:"channels"`
	SMC      map[string]float64 `json:"smc,omitempty"`
}

// Recorder writes what a source read, a line per reading, as JSON lines.
type Recorder struct {
	w        *bufio.Writer
	channels []Channel
}

// NewRecorder writes the header to w; channels are the subscription's.
func NewRecorder(w io.Writer, h Header, channels []Channel) (*Recorder, error) {
	h.Type, h.SchemaVersion = RecordingType, 1
	if h.Wall != nil {
		h.SchemaVersion = plugSchema
	}
	rec := &Recorder{w: bufio.NewWriter(w), channels: channels}
	b, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	rec.w.Write(append(b, '\n'))
	return rec, rec.w.Flush()
}

// Write writes one reading, whose mono_ns counts from origin.
func (rec *Recorder) Write(r Reading, origin time.Time) error {
	b := bytes.NewBuffer(nil)
	fmt.Fprintf(b, `{"mono_ns":%d,"unix_ns":%d,"channels":[`, r.At.Sub(origin).Nanoseconds(), r.Unix.UnixNano())
	for i, c := range rec.channels {
		if i > 0 {
			b.WriteByte(',')
		}
		names, _ := json.Marshal([]string{c.Group, c.Subgroup, c.Name, c.Unit})
		b.Write(names[:len(names)-1])
		fmt.Fprintf(b, ",%d]", r.Values[i])
	}
	b.WriteByte(']')
	if r.HasSystem {
		p, _ := json.Marshal(r.System)
		fmt.Fprintf(b, `,"smc":{"PSTR":%s}`, p)
	}
	b.WriteString("}\n")
	if _, err := rec.w.Write(b.Bytes()); err != nil {
		return err
	}
	return rec.w.Flush()
}

// Extra is what a recording holds besides IOReport's readings: a
// metered plug's (record --wall).
type Extra struct {
	// Wall is the plug, for the header.
	Wall *PlugInfo
	// Lines gives the lines to write after a reading (PlugLine's), the
	// readings' times counting from origin; last is true after the last
	// reading, when it is asked to give what the plug read up to it.
	Lines func(origin time.Time, last bool) [][]byte
}

// extra writes e's lines after a reading.
func (rec *Recorder) extra(e *Extra, origin time.Time, last bool) error {
	if e == nil || e.Lines == nil {
		return nil
	}
	for _, l := range e.Lines(origin, last) {
		if _, err := rec.w.Write(l); err != nil {
			return err
		}
	}
	return rec.w.Flush()
}

// RecordingError is a line of a recording that could not be read: its
// reading is lost; the recording goes on. It is a power.Refusal.
type RecordingError struct {
	Line int
	Err  error
}

func (e *RecordingError) Error() string      { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *RecordingError) Unwrap() error      { return e.Err }
func (e *RecordingError) Reason() string     { return "malformed" }
func (e *RecordingError) Ends() bool         { return false }
func (e *RecordingError) Unmeasurable() bool { return false }
func (e *RecordingError) Cut() bool          { return false }

// ErrNotRecording says that a file does not start with a recording's
// header.
var ErrNotRecording = errors.New("not an IOReport recording: its first line is not {\"type\":\"ioreport-recording\",...}")

// ErrNewerRecording says that a recording is of a schema this exopower
// does not read: a newer one wrote it.
var ErrNewerRecording = errors.New("a newer exopower wrote it")

// Recording reads a recording as a stream of windows: a sampler.Source
// whose windows sit where their readings were taken (mono_ns), from the
// first reading's wall-clock time.
type Recording struct {
	lines  *lineReader
	header Header
	n      int // lines read
	origin time.Time
	plan   Plan
	w      windows
	smc    bool // a reading had the SMC's power
	rails  bool // a reading had a CPU, GPU or ANE channel exopower knows
	// last is where the last reading was placed; joined says that
	// another recording starts at the next reading.
	last   time.Time
	joined bool
	// smcReadings counts the readings with the SMC's power; unjudged is
	// the line of a last reading left in doubt, with none after it.
	smcReadings, unjudged int
	// values is the buffer of the readings' counters, which the windows
	// copy what they keep of.
	values []int64
	// plug is the plug's readings (record --wall), in their order;
	// otherPlug says that a recording joined on named another plug, or
	// none, whose readings are left out.
	plug        []PlugReading
	otherPlug   bool
	plugLeftOut int
}

// NewRecording reads r's header: ErrNotRecording when r's first line is
// no IOReport recording's, ErrNewerRecording when a newer exopower wrote
// it, ErrBrokenHeader when it says it is one and cannot be read.
func NewRecording(r io.Reader) (*Recording, error) {
	rec := &Recording{lines: newLineReader(r)}
	first, long, err := rec.lines.next()
	switch {
	case err == io.EOF:
		return nil, ErrNotRecording
	case errors.Is(err, errEndless):
		return nil, fmt.Errorf("line 1: %w", err)
	case err != nil:
		return nil, err
	}
	rec.n = 1
	if rec.header, err = parseHeader(bytes.TrimPrefix(first, bom), long); err != nil {
		return nil, err
	}
	rec.w = newWindows(&rec.plan, rec.header.HWModel)
	return rec, nil
}

// Header is the recording's first line.
func (rec *Recording) Header() Header { return rec.header }

// ReadingName names what a recording holds, in messages.
func (rec *Recording) ReadingName() string { return "reading" }

// Warnings say what of the channels was left out, and why, and that the
// system's power was not read where no reading has the SMC's.
func (rec *Recording) Warnings() []string {
	ws := slices.Clip(rec.plan.Warnings)
	switch {
	case !rec.smc && rec.n > 2:
		ws = append(ws, NoSMC)
	case rec.w.zeroSystem > 0 && rec.w.zeroSystem == rec.smcReadings:
		ws = append(ws, ZeroSMC)
	case rec.w.zeroSystem > 0:
		ws = append(ws, fmt.Sprintf("the SMC's system power (PSTR) read 0 W in %d of %d readings: taken as no reading there, the system's power held from its neighbours", rec.w.zeroSystem, rec.smcReadings))
	}
	ws = append(ws, rec.plugWarnings()...)
	if rec.unjudged > 0 {
		ws = append(ws, fmt.Sprintf("the last reading, at line %d, could not be true against the one before it, and no reading came after it to tell a glitch from a reset: the time from the reading before it is not measured", rec.unjudged))
	}
	return ws
}

// Measurable says, once the recording is read, whether it held anything
// to measure: a CPU, GPU or ANE channel exopower knows, or the SMC's
// power. Without either its windows read 0 W, which is no measurement:
// the live stream refuses such channels at the start (ErrNoRail).
func (rec *Recording) Measurable() error {
	if rec.rails || rec.smc {
		return nil
	}
	return fmt.Errorf("%w, and no reading has the SMC's system power (PSTR): nothing to measure", ErrNoRail)
}

// Next returns the window that ends at the next reading, a
// *RecordingError for a line that cannot be read (one over MaxLine
// included), a *power.BreakError where the counters went back or the
// channels changed, and io.EOF at the end. A line with no end within
// 16 MiB ends the recording with an error that names it.
func (rec *Recording) Next() (power.Sample, error) {
	if o, ok := rec.w.pop(); ok {
		return rec.hand(o)
	}
	for {
		b, long, err := rec.lines.next()
		switch {
		case err == io.EOF:
			if rec.w.pending() {
				rec.unjudged = rec.w.doubts[0].r.Line
			}
			return power.Sample{}, io.EOF
		case errors.Is(err, errEndless):
			return power.Sample{}, fmt.Errorf("line %d: %w", rec.n+1, err)
		case err != nil:
			return power.Sample{}, err
		}
		rec.n++
		if long {
			return power.Sample{}, &RecordingError{Line: rec.n, Err: errLongLine}
		}
		// A recording joined on may start with a byte order mark too.
		b = bytes.TrimPrefix(b, bom)
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		r, channels, err := rec.parse(b)
		switch {
		case errors.Is(err, errJoined), errors.Is(err, errPlug):
			continue // a joined recording's first reading breaks the chain
		case err != nil:
			return power.Sample{}, &RecordingError{Line: rec.n, Err: err}
		case rec.joined:
			// Another recording: a chain of its own, placed after the
			// one before (whose end it cannot be measured from).
			rec.joined = false
			rec.restart(channels, r)
			return power.Sample{}, &power.BreakError{Source: Name, Err: fmt.Errorf("another recording starts at line %d: the file holds more than one", rec.n)}
		}
		if !slices.Equal(channels, rec.plan.Channels) {
			if rec.plan.Channels != nil {
				rec.restart(channels, r)
				return power.Sample{}, &power.BreakError{Source: Name, Err: fmt.Errorf("the channels changed at line %d", rec.n)}
			}
			rec.plan = NewPlan(channels)
			rec.w = newWindows(&rec.plan, rec.header.HWModel)
		}
		rec.rails = rec.rails || rec.plan.Has.CPU || rec.plan.Has.GPU || rec.plan.Has.ANE
		rec.push(r)
		if o, ok := rec.w.pop(); ok {
			return rec.hand(o)
		}
	}
}

// restart starts a chain of readings of channels at r, judged on their
// own.
func (rec *Recording) restart(channels []Channel, r Reading) {
	rec.plan = NewPlan(channels)
	rec.w = newWindows(&rec.plan, rec.header.HWModel)
	rec.push(r)
}

// push hands r to the windows, and notes where the last reading was
// placed (after a clock that went back, the windows place it later).
func (rec *Recording) push(r Reading) {
	if r.HasSystem {
		rec.smcReadings++
	}
	rec.w.push(r)
	if at := r.At.Add(rec.w.offset); at.After(rec.last) {
		rec.last = at
	}
}

// hand hands over what a reading gave, with the recording's machine.
func (rec *Recording) hand(o outcome) (power.Sample, error) {
	if o.err != nil {
		return power.Sample{}, o.err
	}
	o.s.HWModel, o.s.OSBuild = rec.header.HWModel, rec.header.OSBuild
	return o.s, nil
}

// errJoined is a header line after the first: another recording joined
// on (cat a.ndjson b.ndjson).
var errJoined = errors.New("another recording's header")

// errPlug is a plug's reading, kept aside: no reading of the Mac's.
var errPlug = errors.New("a plug's reading")

// parse reads one line. A header starts another recording: its readings
// are placed after the last one read, at their wall-clock distance when
// that is ahead, else right after. A clock that goes back within a
// recording is the windows' to judge: a lone reading, or a new course.
func (rec *Recording) parse(b []byte) (Reading, []Channel, error) {
	l, ok := fastLine(b, rec.plan.Channels, rec.values)
	if ok {
		rec.values = l.values
	} else {
		var err error
		if l, err = rec.parseSlow(b); err != nil {
			return Reading{}, nil, err
		}
	}
	at := rec.origin.Add(time.Duration(l.monoNS))
	if rec.origin.IsZero() || rec.joined {
		rec.origin = time.Unix(0, l.unixNS).Add(-time.Duration(l.monoNS))
		if at = rec.origin.Add(time.Duration(l.monoNS)); !rec.last.IsZero() && !at.After(rec.last) {
			rec.origin = rec.origin.Add(rec.last.Sub(at) + time.Millisecond)
			at = rec.last.Add(time.Millisecond)
		}
	}
	r := Reading{At: at, Unix: time.Unix(0, l.unixNS), Values: l.values, Line: rec.n}
	if l.hasPSTR {
		// A power beyond the Mac's, or below zero, is the windows' to
		// drop as a glitch of the system's rail, with the reading's
		// counters kept.
		if math.IsNaN(l.pstr) || math.IsInf(l.pstr, 0) {
			return r, nil, fmt.Errorf("PSTR %v W is no system power", l.pstr)
		}
		r.System, r.HasSystem = l.pstr, true
		rec.smc = true
	}
	return r, l.channels, nil
}

// parseSlow reads a line of any shape encoding/json reads, and says
// what is wrong with one that is no reading: errJoined for a header.
func (rec *Recording) parseSlow(b []byte) (parsedLine, error) {
	var l line
	if err := json.Unmarshal(b, &l); err != nil {
		return parsedLine{}, err
	}
	switch l.Type {
	case RecordingType:
		rec.joined = !rec.last.IsZero()
		rec.joinPlug(b)
		return parsedLine{}, errJoined
	case PlugType:
		if err := rec.parsePlug(b); err != nil {
			return parsedLine{}, err
		}
		return parsedLine{}, errPlug
	}
	p := parsedLine{monoNS: l.MonoNS, unixNS: l.UnixNS, values: make([]int64, len(l.Channels)), channels: make([]Channel, len(l.Channels))}
	for i, raw := range l.Channels {
		var f []json.RawMessage
		if err := json.Unmarshal(raw, &f); err != nil || len(f) != 5 {
			return p, fmt.Errorf("channel %d is not [group, subgroup, name, unit, value]", i)
		}
		var names [4]string
		for k := range names {
			if err := json.Unmarshal(f[k], &names[k]); err != nil {
				return p, fmt.Errorf("channel %d: %s is not a string", i, f[k])
			}
		}
		v, err := strconv.ParseInt(string(f[4]), 10, 64)
		if err != nil {
			return p, fmt.Errorf("channel %q: %s is not a whole number", names[2], f[4])
		}
		p.channels[i], p.values[i] = Channel{names[0], names[1], names[2], names[3]}, v
	}
	p.pstr, p.hasPSTR = l.SMC["PSTR"]
	return p, nil
}

// CanRequestSample is false: a recording takes no requests.
func (rec *Recording) CanRequestSample() bool { return false }

// RequestSample cannot be done.
func (rec *Recording) RequestSample() error { return errors.ErrUnsupported }

// Stop does nothing: the caller closes the reader.
func (rec *Recording) Stop() error { return nil }

// Record writes a recording of lib's readings to w: the header, then a
// reading at once and every interval after it, until n readings were
// written (0: no limit) or ctx ends, which takes a last reading at once
// so that the recording runs to the stop. It returns how many were. It
// closes lib where it fails, leaving nothing open. extra, when not nil,
// adds a plug's readings.
func Record(ctx context.Context, lib Library, interval time.Duration, n int, w io.Writer, extra *Extra) (_ int, err error) {
	defer func() {
		if err != nil {
			lib.Close()
		}
	}()
	channels, err := lib.Subscribe()
	if err != nil {
		return 0, err
	}
	hw, build := lib.Machine()
	h := Header{HWModel: hw, OSBuild: build, IntervalSeconds: interval.Seconds()}
	if extra != nil {
		h.Wall = extra.Wall
	}
	rec, err := NewRecorder(w, h, channels)
	if err != nil {
		return 0, err
	}
	values := make([]int64, len(channels))
	origin := time.Now()
	next := origin
	for written := 0; n == 0 || written < n; written++ {
		last := false
		if written > 0 {
			t := time.NewTimer(time.Until(next))
			select {
			case <-ctx.Done():
				// A last reading at the stop, so that the recording
				// runs to it.
				t.Stop()
				last = true
			case <-t.C:
			}
		}
		if err := lib.Read(values); err != nil {
			return written, err
		}
		r := Reading{Values: values, At: time.Now(), Unix: time.Now()}
		r.System, r.HasSystem = lib.SystemPower()
		if err := rec.Write(r, origin); err != nil {
			return written, err
		}
		if err := rec.extra(extra, origin, last || written+1 == n); err != nil {
			return written, err
		}
		if last {
			return written + 1, nil
		}
		next = r.At.Add(interval)
	}
	return n, nil
}
