package output

import (
	"encoding/json"
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
	t.buf = append(b, '\n')
	return t.buf
}

// json appends r as a line of NDJSON, or says it cannot: a number that
// JSON cannot write is left to encoding/json, for its error.
func (t *rowText) json(r *SampleRow) ([]byte, bool) {
	b := append(t.buf[:0], `{"schema_version":`...)
	b = strconv.AppendInt(b, int64(r.SchemaVersion), 10)
	b = jsonString(append(b, `,"type":`...), r.Type)
	b = strconv.AppendInt(append(b, `,"index":`...), int64(r.Index), 10)
	b, ok := jsonNums(b, `,"start_seconds":`, r.StartSeconds, `,"end_seconds":`, r.EndSeconds)
	b = strconv.AppendFloat(append(b, `,"start_unix":`...), float64(r.StartUnix), 'f', 6, 64)
	b = strconv.AppendFloat(append(b, `,"end_unix":`...), float64(r.EndUnix), 'f', 6, 64)
	b, ok2 := jsonNums(b, `,"inside_seconds":`, r.InsideSeconds)
	b, ok3 := jsonComponents(append(b, `,"power_watts":`...), &r.PowerWatts)
	b, ok4 := jsonComponents(append(b, `,"energy_joules":`...), &r.EnergyJoules)
	b = strconv.AppendBool(append(b, `,"clipped_start":`...), r.ClippedStart)
	b = strconv.AppendBool(append(b, `,"clipped_end":`...), r.ClippedEnd)
	b, ok5 := jsonNums(b, `,"gap_before_seconds":`, r.GapBeforeSeconds)
	b = strconv.AppendInt(append(b, `,"refused_before":`...), int64(r.RefusedBefore), 10)
	b = jsonString(append(b, `,"thermal_pressure":`...), r.ThermalPressure)
	b = append(b, t.tailFor(r, false)...)
	t.buf = append(b, '\n')
	return t.buf, ok && ok2 && ok3 && ok4 && ok5
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
			b = jsonString(b, w)
		}
		b = append(b, ']')
	}
	b = jsonString(append(b, `,"source":{"tool":`...), r.Source.Tool)
	b = jsonString(append(b, `,"hw_model":`...), r.Source.HWModel)
	b = jsonString(append(b, `,"os_build":`...), r.Source.OSBuild)
	return append(b, "}}"...)
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

func jsonNums(b []byte, pairs ...any) ([]byte, bool) {
	ok := true
	for i := 0; i < len(pairs); i += 2 {
		var err error
		b = append(b, pairs[i].(string)...)
		if b, err = wire.AppendNum(b, pairs[i+1].(wire.Num)); err != nil {
			ok = false
		}
	}
	return b, ok
}

func jsonComponents(b []byte, c *wire.Components) ([]byte, bool) {
	b, ok := jsonNums(append(b, '{'), `"total":`, c.Total, `,"cpu":`, c.CPU, `,"gpu":`, c.GPU, `,"ane":`, c.ANE)
	for _, f := range [...]struct {
		name string
		n    *wire.Num
	}{{`,"dram":`, c.DRAM}, {`,"system":`, c.System}} {
		if f.n == nil {
			b = append(append(b, f.name...), "null"...)
			continue
		}
		var good bool
		b, good = jsonNums(b, f.name, *f.n)
		ok = ok && good
	}
	return append(b, '}'), ok
}

// jsonString writes s as encoding/json does: plain printable ASCII as it
// is, anything it would escape through it.
func jsonString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
