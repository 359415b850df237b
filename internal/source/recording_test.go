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
		{"a newer schema with a long field", `{"type":"ioreport-recording","schema_version":2,"hw_model":"` + long + `"}`, ioreport.ErrNewerRecording, "the exopower that wrote it"},
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
