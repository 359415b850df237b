package output

import (
	"encoding/json"
	"strconv"

	"github.com/exopower/exopower/internal/wire"
)

// appendSampleLine appends l as encoding/json writes it, and a newline,
// without reflection: watch --json writes a line per window, and a
// meter's work at every sample adds to the power it measures. The bytes
// are json.Marshal's to the last one (TestAppendSampleLineIsMarshal).
func appendSampleLine(b []byte, l *wire.SampleLine) ([]byte, error) {
	b = append(b, `{"schema_version":`...)
	b = appendInt(b, l.SchemaVersion)
	b = append(b, `,"type":`...)
	b = appendString(b, l.Type)
	b = append(b, `,"time":`...)
	b = appendString(b, l.Time)
	b = append(b, `,"window_seconds":`...)
	b, err := appendNum(b, l.WindowSeconds)
	if err != nil {
		return b, err
	}
	b = append(b, `,"power_watts":`...)
	if b, err = appendComponents(b, &l.PowerWatts); err != nil {
		return b, err
	}
	b = append(b, `,"energy_joules":`...)
	if b, err = appendComponents(b, &l.EnergyJoules); err != nil {
		return b, err
	}
	b = append(b, `,"thermal_pressure":`...)
	b = appendString(b, l.ThermalPressure)
	if l.Node != "" {
		b = append(b, `,"node":`...)
		b = appendString(b, l.Node)
	}
	if l.Label != "" {
		b = append(b, `,"label":`...)
		b = appendString(b, l.Label)
	}
	if w := l.Wall; w != nil {
		b = append(b, `,"wall":{"power_watts":`...)
		if w.PowerWatts == nil {
			b = append(b, "null"...)
		} else if b, err = appendNum(b, *w.PowerWatts); err != nil {
			return b, err
		}
		b = append(b, `,"energy_joules":`...)
		if b, err = appendNum(b, w.EnergyJoules); err != nil {
			return b, err
		}
		b = append(b, '}')
	}
	return append(b, '}', '\n'), nil
}

// appendComponents appends c as encoding/json writes it.
func appendComponents(b []byte, c *wire.Components) ([]byte, error) {
	var err error
	for _, f := range [...]struct {
		key string
		n   *wire.Num
	}{{`{"total":`, &c.Total}, {`,"cpu":`, &c.CPU}, {`,"gpu":`, &c.GPU}, {`,"ane":`, &c.ANE}, {`,"dram":`, c.DRAM}, {`,"system":`, c.System}} {
		b = append(b, f.key...)
		if f.n == nil { // dram or system, unknown
			b = append(b, "null"...)
			continue
		}
		if b, err = appendNum(b, *f.n); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

// appendNum appends n as its MarshalJSON writes it.
func appendNum(b []byte, n wire.Num) ([]byte, error) { return wire.AppendNum(b, n) }

func appendInt(b []byte, n int) []byte { return strconv.AppendInt(b, int64(n), 10) }

// appendString appends s quoted as encoding/json quotes it: as it is when
// it holds only printable ASCII that needs no escape, which a time, a
// thermal pressure and most node names do; through encoding/json
// otherwise.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			v, _ := json.Marshal(s)
			return append(b, v...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
