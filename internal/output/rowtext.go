package output

import (
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/exopower/exopower/internal/wire"
)

// rowText writes a row's text by hand, in what encoding/csv and
// encoding/json would write byte for byte (the tests hold it to them):
// report --samples writes a row for each of a million readings, and
// encoding/json's reflection and csv.Writer's strings cost more than
// reading the recording did.
type rowText struct {
	buf []byte
	// A span's rows all carry the same command and source: their text
	// is made once, and again only when they change.
	command []string
	source  wire.Source
	tail    []byte
	tailOK  bool
	tailCSV bool
}

// csv appends r as a CSV record, in csvRecord's columns.
func (t *rowText) csv(r *SampleRow) []byte {
	b := strconv.AppendInt(t.buf[:0], int64(r.Index), 10)
	p, e := &r.PowerWatts, &r.EnergyJoules
	for _, n := range [...]wire.Num{r.StartSeconds, r.EndSeconds} {
		b = csvNum(append(b, ','), n)
	}
	b = strconv.AppendFloat(append(b, ','), float64(r.StartUnix), 'f', 6, 64)
	b = strconv.AppendFloat(append(b, ','), float64(r.EndUnix), 'f', 6, 64)
	for _, n := range [...]wire.Num{r.InsideSeconds, p.CPU, p.GPU, p.ANE, p.Total, e.CPU, e.GPU, e.ANE, e.Total} {
		b = csvNum(append(b, ','), n)
	}
	b = strconv.AppendBool(append(b, ','), r.ClippedStart)
	b = strconv.AppendBool(append(b, ','), r.ClippedEnd)
	b = csvNum(append(b, ','), r.GapBeforeSeconds)
	b = strconv.AppendInt(append(b, ','), int64(r.RefusedBefore), 10)
	b = csvField(append(b, ','), r.ThermalPressure)
	for _, n := range [...]*wire.Num{p.DRAM, p.System, e.DRAM, e.System} {
		b = append(b, ',')
		if n != nil {
			b = csvNum(b, *n)
		}
	}
	b = append(b, t.tailFor(r, true)...)
	for _, n := range [...]*wire.Num{r.wallPower(), r.wallEnergy()} {
		b = append(b, ',')
		if n != nil {
			b = csvNum(b, *n)
		}
	}
	t.buf = append(b, '\n')
	return t.buf
}

// json appends r as a line of NDJSON, or says it cannot: a number that
// JSON cannot write is left to encoding/json, for its error.
func (t *rowText) json(r *SampleRow) ([]byte, bool) {
	b := append(t.buf[:0], `{"schema_version":`...)
	b = appendInt(b, r.SchemaVersion)
	b = appendString(append(b, `,"type":`...), r.Type)
	b = appendInt(append(b, `,"index":`...), r.Index)
	b, err := jsonNums(b, `,"start_seconds":`, r.StartSeconds, `,"end_seconds":`, r.EndSeconds)
	b = strconv.AppendFloat(append(b, `,"start_unix":`...), float64(r.StartUnix), 'f', 6, 64)
	b = strconv.AppendFloat(append(b, `,"end_unix":`...), float64(r.EndUnix), 'f', 6, 64)
	b, err2 := jsonNums(b, `,"inside_seconds":`, r.InsideSeconds)
	b, err3 := appendComponents(append(b, `,"power_watts":`...), &r.PowerWatts)
	b, err4 := appendComponents(append(b, `,"energy_joules":`...), &r.EnergyJoules)
	b = strconv.AppendBool(append(b, `,"clipped_start":`...), r.ClippedStart)
	b = strconv.AppendBool(append(b, `,"clipped_end":`...), r.ClippedEnd)
	b, err5 := jsonNums(b, `,"gap_before_seconds":`, r.GapBeforeSeconds)
	b = appendInt(append(b, `,"refused_before":`...), r.RefusedBefore)
	b = appendString(append(b, `,"thermal_pressure":`...), r.ThermalPressure)
	b = append(b, t.tailFor(r, false)...)
	b, err6 := appendRowWall(b, r.Wall)
	t.buf = append(b, '}', '\n')
	return t.buf, err == nil && err2 == nil && err3 == nil && err4 == nil && err5 == nil && err6 == nil
}

// appendRowWall appends a row's wall as encoding/json writes it: nothing
// without a plug (omitempty).
func appendRowWall(b []byte, w *RowWall) ([]byte, error) {
	if w == nil {
		return b, nil
	}
	var first error
	for _, f := range [...]struct {
		key string
		n   *wire.Num
	}{{`,"wall":{"power_watts":`, w.PowerWatts}, {`,"energy_joules":`, w.EnergyJoules}} {
		b = append(b, f.key...)
		if f.n == nil {
			b = append(b, "null"...)
			continue
		}
		var err error
		if b, err = appendNum(b, *f.n); err != nil && first == nil {
			first = err
		}
	}
	return append(b, '}'), first
}

// tailFor gives the text of r's command and source, in CSV or JSON, made
// again when they differ from the row before's.
func (t *rowText) tailFor(r *SampleRow, asCSV bool) []byte {
	if !t.tailOK || t.tailCSV != asCSV || r.Source != t.source || !slices.Equal(r.Command, t.command) || (r.Command == nil) != (t.command == nil) {
		t.command, t.source, t.tailOK, t.tailCSV = slices.Clone(r.Command), r.Source, true, asCSV
		if asCSV {
			t.tail = csvTail(t.tail[:0], r)
		} else {
			t.tail = jsonTail(t.tail[:0], r)
		}
	}
	return t.tail
}

func csvTail(b []byte, r *SampleRow) []byte {
	for _, s := range [...]string{ShellQuote(r.Command), r.Source.Tool, r.Source.HWModel, r.Source.OSBuild} {
		b = csvField(append(b, ','), s)
	}
	return b
}

func jsonTail(b []byte, r *SampleRow) []byte {
	b = append(b, `,"command":`...)
	if r.Command == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, w := range r.Command {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, w)
		}
		b = append(b, ']')
	}
	b = appendString(append(b, `,"source":{"tool":`...), r.Source.Tool)
	b = appendString(append(b, `,"hw_model":`...), r.Source.HWModel)
	b = appendString(append(b, `,"os_build":`...), r.Source.OSBuild)
	return append(b, '}')
}

// csvNum writes n as csvRecord does: nothing where it cannot be written.
func csvNum(b []byte, n wire.Num) []byte {
	b, _ = wire.AppendNum(b, n)
	return b
}

// csvField quotes s where csv.Writer would, as it would.
func csvField(b []byte, s string) []byte {
	r1, _ := utf8.DecodeRuneInString(s)
	if s == "" || (s != `\.` && !strings.ContainsAny(s, "\",\r\n") && !unicode.IsSpace(r1)) {
		return append(b, s...)
	}
	b = append(b, '"')
	b = append(b, strings.ReplaceAll(s, `"`, `""`)...)
	return append(b, '"')
}

func jsonNums(b []byte, pairs ...any) ([]byte, error) {
	var first error
	for i := 0; i < len(pairs); i += 2 {
		var err error
		b = append(b, pairs[i].(string)...)
		if b, err = appendNum(b, pairs[i+1].(wire.Num)); err != nil && first == nil {
			first = err
		}
	}
	return b, first
}
