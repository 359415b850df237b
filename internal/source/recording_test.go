package source

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/ioreport"
	"github.com/exopower/exopower/internal/powermetrics"
)

// readings are the lines of an IOReport recording after its header: n
// readings 100 ms apart, the CPU at 10 W.
func readings(t *testing.T, n int) string {
	t.Helper()
	var buf bytes.Buffer
	rec, err := ioreport.NewRecorder(&buf, ioreport.Header{IntervalSeconds: 0.1}, []ioreport.Channel{{Group: ioreport.Group, Name: "CPU Energy", Unit: "mJ"}})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Unix(1796300000, 0)
	for k := range n {
		at := start.Add(time.Duration(k) * 100 * time.Millisecond)
		if err := rec.Write(ioreport.Reading{At: at, Unix: at, Values: []int64{int64(k) * 1000}}, start); err != nil {
			t.Fatal(err)
		}
	}
	_, rest, _ := strings.Cut(buf.String(), "\n")
	return rest
}

// A recording is told from its first line whatever its length, after a
// byte order mark; a header that names an IOReport recording and does
// not parse, or a newer one, is refused as an IOReport recording's, with
// exopower record's hint or the newer exopower's, never as a malformed
// plist with powermetrics's.
func TestARecordingIsToldFromItsFirstLineHoweverLong(t *testing.T) {
	long := strings.Repeat("M", 300)
	for _, c := range []struct {
		name, header string
		err          error  // nil: read
		hint         string // of the error
	}{
		{"a header over 256 bytes", `{"type":"ioreport-recording","schema_version":1,"hw_model":"` + long + `","interval_seconds":0.1}`, nil, ""},
		{"its type after a long field", `{"hw_model":"` + long + `","type":"ioreport-recording","schema_version":1}`, nil, ""},
		{"a byte order mark", "\ufeff" + `{"type":"ioreport-recording","schema_version":1,"interval_seconds":0.1}`, nil, ""},
		{"a NaN in the header", `{"type":"ioreport-recording","schema_version":1,"interval_seconds":NaN}`, ioreport.ErrBrokenHeader, "exopower record"},
		{"a newer schema with a long field", `{"type":"ioreport-recording","schema_version":3,"hw_model":"` + long + `"}`, ioreport.ErrNewerRecording, "the exopower that wrote it"},
	} {
		res, err := Recording(strings.NewReader(c.header+"\n"+readings(t, 4)), nil)
		if c.err == nil {
			if err != nil || res.Samples != 3 || res.Source != IOReport {
				t.Errorf("%s: %v, %d windows of %s", c.name, err, res.Samples, res.Source)
			}
			continue
		}
		err = RecordingError("r.ndjson", err)
		hints := strings.Join(cli.HintsOf(err), "\n")
		if !errors.Is(err, c.err) || errors.Is(err, powermetrics.ErrMalformed) || !strings.Contains(hints, c.hint) {
			t.Errorf("%s: %v, hints %q", c.name, err, hints)
		}
	}
}

// recording is an IOReport recording of channels, n readings 100 ms
// apart, each counter 1000 units more than the last, the SMC's power
// pstr watts where pstr > 0.
func recording(t *testing.T, channels []ioreport.Channel, n int, pstr float64) string {
	t.Helper()
	var buf bytes.Buffer
	rec, err := ioreport.NewRecorder(&buf, ioreport.Header{IntervalSeconds: 0.1}, channels)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Unix(1796300000, 0)
	for k := range n {
		at := start.Add(time.Duration(k) * 100 * time.Millisecond)
		values := make([]int64, len(channels))
		for i := range values {
			values[i] = int64(k) * 1000
		}
		if err := rec.Write(ioreport.Reading{At: at, Unix: at, Values: values, System: pstr, HasSystem: pstr > 0}, start); err != nil {
			t.Fatal(err)
		}
	}
	return buf.String()
}

// A recording with nothing to measure (no CPU, GPU or ANE channel that
// exopower knows, and no reading of the SMC's power) is refused with the
// live stream's message, not read as 0 W; the SMC's power alone is a
// measurement, and so is one known rail.
func TestARecordingWithNothingToMeasureIsRefused(t *testing.T) {
	unknown := []ioreport.Channel{{Group: ioreport.Group, Name: "DISP", Unit: "mJ"}, {Group: ioreport.Group, Name: "CPU Energy (old)", Unit: "mJ"}}
	_, err := Recording(strings.NewReader(recording(t, unknown, 5, 0)), nil)
	err = RecordingError("r.ndjson", err)
	if !errors.Is(err, ioreport.ErrNoRail) || !strings.Contains(err.Error(), "IOReport's Energy Model group has no CPU, GPU or ANE energy channel exopower knows, and no reading has the SMC's system power (PSTR): nothing to measure") ||
		!strings.Contains(strings.Join(cli.HintsOf(err), "\n"), "sudo powermetrics") {
		t.Errorf("%v, hints %q", err, cli.HintsOf(err))
	}
	if res, err := Recording(strings.NewReader(recording(t, unknown, 5, 40)), nil); err != nil || res.Samples != 4 || res.Energy.System < 15.9 {
		t.Errorf("the SMC's power alone: %v, %d windows, system %v J", err, res.Samples, res.Energy.System)
	}
	known := append(unknown, ioreport.Channel{Group: ioreport.Group, Name: "GPU Energy", Unit: "mJ"})
	if res, err := Recording(strings.NewReader(recording(t, known, 5, 0)), nil); err != nil || res.Samples != 4 || res.Energy.GPU != 4 {
		t.Errorf("the GPU's channel: %v, %d windows, GPU %v J", err, res.Samples, res.Energy.GPU)
	}
}
