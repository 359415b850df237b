package output

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/exopower/exopower/internal/power"
	"github.com/exopower/exopower/internal/sampler"
	"github.com/exopower/exopower/internal/wall"
	"github.com/exopower/exopower/internal/wire"
)

// SampleRow is one window of a span, as exopower report --samples and run
// --samples write it. Times are in seconds from the span's start (t = 0;
// the first window may start before it) and in Unix time; a window's own
// edges are kept, and InsideSeconds says how much of it lies in the span.
type SampleRow struct {
	SchemaVersion int    `json:"schema_version"`
	Type          string `json:"type"` // "window"
	// Index is the powermetrics document the window came from.
	Index         int             `json:"index"`
	StartSeconds  wire.Num        `json:"start_seconds"`
	EndSeconds    wire.Num        `json:"end_seconds"`
	StartUnix     UnixTime        `json:"start_unix"`
	EndUnix       UnixTime        `json:"end_unix"`
	InsideSeconds wire.Num        `json:"inside_seconds"`
	PowerWatts    wire.Components `json:"power_watts"`
	// EnergyJoules is what the span counts from the end of the row before
	// (or the span's start) to the end of this window, inside the span:
	// the window's part, and the bridge over a gap before it. The rows'
	// sum is the span's energy.
	EnergyJoules wire.Components `json:"energy_joules"`
	ClippedStart bool            `json:"clipped_start"`
	ClippedEnd   bool            `json:"clipped_end"`
	// GapBeforeSeconds is the time inside the span that no window
	// covered just before this one.
	GapBeforeSeconds wire.Num `json:"gap_before_seconds"`
	// RefusedBefore counts the documents refused between the window
	// before and this one.
	RefusedBefore   int    `json:"refused_before"`
	ThermalPressure string `json:"thermal_pressure"`
	// Command is the command the span measured, as run's summary gives
	// it; null in the rows of a recording, which ran none. A picture of
	// the rows is titled by it.
	Command []string `json:"command"`
	// Source is where the windows came from and the Mac they measured,
	// as a summary's: a picture of the rows names them.
	Source wire.Source `json:"source"`
	// Wall is the metered plug's part of the row (run --wall); absent
	// without a plug, as in a line of watch --json.
	Wall *RowWall `json:"wall,omitempty"`
}

// RowWall is a row's figures at the wall, from the plug's readings on
// the same timeline as the Mac's windows.
type RowWall struct {
	// PowerWatts is the plug's energy over the window's own edges over
	// the time its readings covered of them; null where they covered
	// none.
	PowerWatts *wire.Num `json:"power_watts"`
	// EnergyJoules is the plug's energy over the row's part of the span,
	// the one its energy_joules counts: the rows' sum is the span's
	// energy at the wall by the plug's readings. Null where they
	// covered none of it.
	EnergyJoules *wire.Num `json:"energy_joules"`
}

// WallReader answers the plug's energy over [from, to] on the timeline
// of the windows (wall.Session.Read).
type WallReader func(from, to time.Time) wall.Span

// UnixTime is seconds since 1970 in UTC, written with microseconds.
type UnixTime float64

// MarshalJSON writes u in plain decimal with six decimals.
func (u UnixTime) MarshalJSON() ([]byte, error) {
	return strconv.AppendFloat(nil, float64(u), 'f', 6, 64), nil
}

func unixOf(t time.Time) UnixTime { return UnixTime(float64(t.UnixNano()) / 1e9) }

// WindowLog keeps every window a span is handed, for its rows once the
// span is closed. Its Add is a span's onWindow callback; it is safe to
// call from the sampler's goroutine while Rows is called from another.
type WindowLog struct {
	mu      sync.Mutex
	windows []sampler.Window
	totals  []sampler.Totals
}

// Add keeps window w and the span's totals after it.
func (l *WindowLog) Add(w sampler.Window, tot sampler.Totals) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.windows = append(l.windows, w)
	l.totals = append(l.totals, tot)
}

// Rows describes the windows of the span res measured, one row each.
// Windows that start at or after the span's end arrived before it was
// closed but are not part of it, and are left out.
func (l *WindowLog) Rows(res sampler.Result) []SampleRow { return l.RowsAtWall(res, nil) }

// RowsAtWall is Rows with each row's figures at the wall, read from
// plug (none where nil).
//
// Each row's wall is the plug's readings integrated over the row's own
// time, as the span's wall is, not the plug's newest reading when the
// window ended: a plug refreshes its power about once a second, so a
// window of 100 ms holds one reading at most, and the reading in force
// at its end may be one taken before it began. The integration holds
// each reading to the midpoints of its neighbours, so a window between
// two readings gets the share of each that falls in it, and the rows'
// energies add up over the span. It costs a search of the plug's
// readings and the few around the window, per row: no more than the
// row's own text. Read it once the plug has been read after the span's
// end (wall.Session.Finish), so that the last window is held too.
func (l *WindowLog) RowsAtWall(res sampler.Result, plug WallReader) []SampleRow {
	l.mu.Lock()
	defer l.mu.Unlock()
	end := res.Start.Add(res.Duration)
	src := wire.Source{Tool: res.Source, HWModel: res.HWModel, OSBuild: res.OSBuild}
	var rows []SampleRow
	m := newRowMaker(res.Start)
	for i, w := range l.windows {
		if !w.Start.Before(end) {
			break
		}
		after := l.totals[i].Energy
		if i == len(l.windows)-1 || !l.windows[i+1].Start.Before(end) {
			// The last one may reach past the end: the span's own
			// reading stops at the end.
			after = res.Energy
		}
		from := m.prevEnd
		r := m.row(w, after, end, src)
		if plug != nil {
			r.Wall = rowWall(plug, w, maxTime(from, res.Start), minTime(w.End, end))
		}
		rows = append(rows, r)
	}
	return rows
}

// rowWall is window w's figures at the wall: its power over the
// window's own edges, and its energy over [from, to], the row's part of
// the span.
func rowWall(plug WallReader, w sampler.Window, from, to time.Time) *RowWall {
	whole := plug(w.Start, w.End)
	rw := &RowWall{}
	if secs := w.End.Sub(w.Start).Seconds() * whole.Coverage; secs > 0 {
		p := wire.Num(whole.Joules / secs)
		rw.PowerWatts = &p
	}
	part := whole
	switch {
	case !to.After(from):
		// A row with nothing inside the span counts nothing there.
		part = wall.Span{Coverage: 1}
	case !from.Equal(w.Start) || !to.Equal(w.End):
		part = plug(from, to)
	}
	if part.Coverage > 0 {
		e := wire.Num(part.Joules)
		rw.EnergyJoules = &e
	}
	return rw
}

// rowMaker describes a span's windows one after the other, each against
// the row before it.
type rowMaker struct {
	start     time.Time
	before    power.Values // the span's energy at the end of the row before
	prevEnd   time.Time
	prevIndex int
}

func newRowMaker(start time.Time) rowMaker {
	return rowMaker{start: start, prevEnd: start, prevIndex: -1}
}

// row describes window w, after which the span's energy is after, of a
// span that ends at end.
func (m *rowMaker) row(w sampler.Window, after power.Values, end time.Time, src wire.Source) SampleRow {
	start := m.start
	r := SampleRow{
		SchemaVersion: wire.SchemaVersion, Type: "window", Index: w.Index,
		StartSeconds: wire.Num(w.Start.Sub(start).Seconds()), EndSeconds: wire.Num(w.End.Sub(start).Seconds()),
		StartUnix: unixOf(w.Start), EndUnix: unixOf(w.End),
		InsideSeconds:    wire.Num(minTime(w.End, end).Sub(maxTime(w.Start, start)).Seconds()),
		PowerWatts:       wire.NewComponents(w.Power, w.Has),
		EnergyJoules:     wire.NewComponents(after.Sub(m.before), w.Has),
		ClippedStart:     w.Start.Before(start),
		ClippedEnd:       w.End.After(end),
		GapBeforeSeconds: wire.Num(max(0, w.Start.Sub(maxTime(m.prevEnd, start)).Seconds())),
		ThermalPressure:  w.ThermalPressure,
		Source:           src,
	}
	if m.prevIndex >= 0 {
		r.RefusedBefore = max(0, w.Index-m.prevIndex-1)
	}
	m.before, m.prevEnd, m.prevIndex = after, w.End, w.Index
	return r
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// SamplesFormat is how the rows of a span are written.
type SamplesFormat string

// The formats of the rows: CSV with a header line, or NDJSON, one
// SampleRow a line.
const (
	SamplesCSV    SamplesFormat = "csv"
	SamplesNDJSON SamplesFormat = "ndjson"
)

// ParseSamplesFormat reads a format's name: csv, ndjson or jsonl.
func ParseSamplesFormat(name string) (SamplesFormat, error) {
	switch strings.ToLower(name) {
	case "csv":
		return SamplesCSV, nil
	case "ndjson", "jsonl":
		return SamplesNDJSON, nil
	}
	return "", fmt.Errorf("unknown samples format %q: use csv or ndjson", name)
}

// SamplesFormatOf says the format a path's extension names: .csv,
// .ndjson or .jsonl.
func SamplesFormatOf(path string) (SamplesFormat, error) {
	ext := strings.TrimPrefix(filepath.Ext(path), ".")
	f, err := ParseSamplesFormat(ext)
	if ext == "" || err != nil {
		return "", fmt.Errorf("%s: cannot tell the samples format from the name: end it in .csv, .ndjson or .jsonl, or give --samples-format", path)
	}
	return f, nil
}

// SamplesHeader names the CSV columns, in order. Columns added later
// come last, so that the columns before keep their places: the memory's
// and the system's (empty where the source does not report them), then
// the command (empty without one) and the source, then the wall's
// (empty without a plug: the header is the same with --wall and
// without, so that a reader of the columns by name or by place reads
// both alike).
var SamplesHeader = []string{
	"index", "start_seconds", "end_seconds", "start_unix", "end_unix", "inside_seconds",
	"cpu_watts", "gpu_watts", "ane_watts", "total_watts",
	"cpu_joules", "gpu_joules", "ane_joules", "total_joules",
	"clipped_start", "clipped_end", "gap_before_seconds", "refused_before", "thermal_pressure",
	"dram_watts", "system_watts", "dram_joules", "system_joules",
	"command", "tool", "hw_model", "os_build",
	"wall_watts", "wall_joules",
}

// earlierColumns are how many columns the samples files of earlier
// versions have: before the memory's and the system's, before the
// command and the source, and before the wall's. They still read.
var earlierColumns = []int{19, 23, 27}

// WriteSamples writes rows in format f.
func WriteSamples(w io.Writer, f SamplesFormat, rows []SampleRow) error {
	e := newRowEncoder(w, f)
	e.header()
	for i := range rows {
		e.write(&rows[i])
	}
	return e.flush()
}

// rowEncoder writes rows in a format, through a buffer: its first error
// sticks, and later writes do nothing.
type rowEncoder struct {
	bw   *bufio.Writer
	cw   *csv.Writer
	text rowText
	err  error
}

func newRowEncoder(w io.Writer, f SamplesFormat) *rowEncoder {
	e := &rowEncoder{bw: bufio.NewWriterSize(w, 64<<10)}
	if f == SamplesCSV {
		e.cw = csv.NewWriter(e.bw)
	}
	return e
}

// header writes the CSV header; NDJSON has none.
func (e *rowEncoder) header() {
	if e.cw != nil && e.err == nil {
		// Through csv.Writer's own buffer, emptied into bw at once: the
		// rows go to bw directly (rowText), after it.
		if e.err = e.cw.Write(SamplesHeader); e.err == nil {
			e.cw.Flush()
			e.err = e.cw.Error()
		}
	}
}

func (e *rowEncoder) write(r *SampleRow) {
	switch {
	case e.err != nil:
	case e.cw != nil:
		_, e.err = e.bw.Write(e.text.csv(r))
	default:
		if b, ok := e.text.json(r); ok {
			_, e.err = e.bw.Write(b)
		} else {
			e.err = WriteJSON(e.bw, r)
		}
	}
}

// flush writes what is buffered, and says the first error.
func (e *rowEncoder) flush() error {
	if e.cw != nil && e.err == nil {
		e.cw.Flush()
		e.err = e.cw.Error()
	}
	if e.err == nil {
		e.err = e.bw.Flush()
	}
	return e.err
}

func csvRecord(r SampleRow) []string {
	num := func(n wire.Num) string { b, _ := n.MarshalJSON(); return string(b) }
	opt := func(n *wire.Num) string {
		if n == nil {
			return ""
		}
		return num(*n)
	}
	unix := func(u UnixTime) string { b, _ := u.MarshalJSON(); return string(b) }
	p, e := r.PowerWatts, r.EnergyJoules
	return []string{
		strconv.Itoa(r.Index), num(r.StartSeconds), num(r.EndSeconds), unix(r.StartUnix), unix(r.EndUnix), num(r.InsideSeconds),
		num(p.CPU), num(p.GPU), num(p.ANE), num(p.Total),
		num(e.CPU), num(e.GPU), num(e.ANE), num(e.Total),
		strconv.FormatBool(r.ClippedStart), strconv.FormatBool(r.ClippedEnd), num(r.GapBeforeSeconds),
		strconv.Itoa(r.RefusedBefore), r.ThermalPressure,
		opt(p.DRAM), opt(p.System), opt(e.DRAM), opt(e.System),
		ShellQuote(r.Command), r.Source.Tool, r.Source.HWModel, r.Source.OSBuild,
		opt(r.wallPower()), opt(r.wallEnergy()),
	}
}

// wallPower and wallEnergy are the row's figures at the wall, nil
// without a plug or where its readings covered none of the row.
func (r *SampleRow) wallPower() *wire.Num {
	if r.Wall == nil {
		return nil
	}
	return r.Wall.PowerWatts
}

func (r *SampleRow) wallEnergy() *wire.Num {
	if r.Wall == nil {
		return nil
	}
	return r.Wall.EnergyJoules
}

// ErrNotSamples says that a file is neither CSV nor NDJSON rows as
// WriteSamples writes them.
var ErrNotSamples = errors.New("not a samples file (CSV or NDJSON from --samples)")

// ReadSamples reads rows that WriteSamples wrote, in either format: NDJSON
// when the first byte that is not a space is '{'.
func ReadSamples(r io.Reader) ([]SampleRow, error) {
	br := bufio.NewReader(r)
	head, _ := br.Peek(64)
	if bytes.HasPrefix(bytes.TrimLeft(head, " \t\r\n"), []byte("{")) {
		return readNDJSON(br)
	}
	return readCSV(br)
}

func readNDJSON(r io.Reader) ([]SampleRow, error) {
	var rows []SampleRow
	dec := json.NewDecoder(r)
	for line := 1; ; line++ {
		var row SampleRow
		err := dec.Decode(&row)
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return nil, fmt.Errorf("row %d: %w: %v", line, ErrNotSamples, err)
		}
		if row.Type != "window" {
			return nil, fmt.Errorf("row %d: %w: its type is %q, not \"window\"", line, ErrNotSamples, row.Type)
		}
		rows = append(rows, row)
	}
}

func readCSV(r io.Reader) ([]SampleRow, error) {
	cr := csv.NewReader(r)
	header, err := cr.Read()
	if _, parse := err.(*csv.ParseError); err != nil && err != io.EOF && !parse {
		return nil, err // the reading failed, not the file
	}
	known := err == nil && (slices.Contains(earlierColumns, len(header)) || len(header) == len(SamplesHeader))
	if !known || strings.Join(header, ",") != strings.Join(SamplesHeader[:len(header)], ",") {
		return nil, fmt.Errorf("%w: the first line is not the header %s", ErrNotSamples, strings.Join(SamplesHeader[:3], ",")+",...")
	}
	var rows []SampleRow
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrNotSamples, err)
		}
		row, err := parseRecord(rec)
		if err != nil {
			line, _ := cr.FieldPos(0)
			return nil, fmt.Errorf("line %d: %w: %v", line, ErrNotSamples, err)
		}
		rows = append(rows, row)
	}
}

// parseRecord reads one CSV record in the order of SamplesHeader.
func parseRecord(rec []string) (SampleRow, error) {
	var firstErr error
	f := func(i int) float64 {
		v, err := strconv.ParseFloat(rec[i], 64)
		if (err != nil || math.IsNaN(v) || math.IsInf(v, 0)) && firstErr == nil {
			firstErr = fmt.Errorf("%s: %q is not a number", SamplesHeader[i], rec[i])
		}
		return v
	}
	b := func(i int) bool {
		v, err := strconv.ParseBool(rec[i])
		if err != nil && firstErr == nil {
			firstErr = fmt.Errorf("%s: %q is not true or false", SamplesHeader[i], rec[i])
		}
		return v
	}
	opt := func(i int) *wire.Num {
		if i >= len(rec) || rec[i] == "" {
			return nil
		}
		n := wire.Num(f(i))
		return &n
	}
	c := func(i, extra int) wire.Components {
		return wire.Components{CPU: wire.Num(f(i)), GPU: wire.Num(f(i + 1)), ANE: wire.Num(f(i + 2)), Total: wire.Num(f(i + 3)),
			DRAM: opt(extra), System: opt(extra + 1)}
	}
	r := SampleRow{
		SchemaVersion: wire.SchemaVersion, Type: "window", Index: int(f(0)),
		StartSeconds: wire.Num(f(1)), EndSeconds: wire.Num(f(2)), StartUnix: UnixTime(f(3)), EndUnix: UnixTime(f(4)),
		InsideSeconds: wire.Num(f(5)), PowerWatts: c(6, 19), EnergyJoules: c(10, 21),
		ClippedStart: b(14), ClippedEnd: b(15), GapBeforeSeconds: wire.Num(f(16)), RefusedBefore: int(f(17)),
		ThermalPressure: rec[18],
	}
	if len(rec) >= 27 {
		r.Source = wire.Source{Tool: rec[24], HWModel: rec[25], OSBuild: rec[26]}
		if rec[23] != "" {
			cmd, err := ShellSplit(rec[23])
			if err != nil && firstErr == nil {
				firstErr = fmt.Errorf("command: %w", err)
			}
			r.Command = cmd
		}
	}
	if p, e := opt(27), opt(28); p != nil || e != nil {
		r.Wall = &RowWall{PowerWatts: p, EnergyJoules: e}
	}
	return r, firstErr
}
