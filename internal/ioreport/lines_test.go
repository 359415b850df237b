package ioreport

import (
	"bytes"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/sampler"
	"github.com/exopower/exopower/internal/testfiles"
)

// smallRecording is a recording of n readings 100 ms apart, the CPU at
// 10 W and the system at 40 W: its header and a line each, with their
// ends.
func smallRecording(t *testing.T, n int) []string {
	t.Helper()
	var buf bytes.Buffer
	rec, err := NewRecorder(&buf, Header{HWModel: "Mac14,14", IntervalSeconds: 0.1}, []Channel{{Group: Group, Name: "CPU Energy", Unit: "mJ"}})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Unix(1796300000, 0)
	for k := range n {
		at := start.Add(time.Duration(k) * 100 * time.Millisecond)
		if err := rec.Write(Reading{At: at, Unix: at, Values: []int64{int64(k) * 1000}, System: 40, HasSystem: true}, start); err != nil {
			t.Fatal(err)
		}
	}
	lines := strings.SplitAfter(buf.String(), "\n")
	return lines[:len(lines)-1] // after the last line's end, nothing
}

// A line over MaxLine loses its reading alone, named by its line number;
// the readings after it are read as usual, and the counters, exact
// differences, still hold all the energy. The line is never held whole:
// no more than MaxLine of it is kept.
func TestALineTooLongLosesItsReadingAlone(t *testing.T) {
	lines := smallRecording(t, 20)
	lines[5] = `{"mono_ns":400000000,"pad":"` + strings.Repeat("x", MaxLine+MaxLine/2) + "\"}\n"
	rec, err := NewRecording(strings.NewReader(strings.Join(lines, "")))
	if err != nil {
		t.Fatal(err)
	}
	res, err := sampler.RecordingWindows(rec, Name, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := strings.Join(res.Warnings, "\n")
	if res.Samples != 18 || math.Abs(res.Energy.CPU-19) > 1e-9 || !strings.Contains(w, "line 6: longer than 4 MiB, where a reading of 364 channels takes about 25 KB: its reading is left out") || strings.Contains(w, "ended with an error") {
		t.Errorf("%d windows, CPU %v J; want 18 windows and 19 J; warnings:\n%s", res.Samples, res.Energy.CPU, w)
	}
	if c := cap(rec.lines.buf); c >= 2*MaxLine {
		t.Errorf("a buffer of %d bytes for a line of %d", c, len(lines[5]))
	}
}

// A line with no end (NUL bytes for ever) is read no further than
// 16 MiB: the readings before it stand, and the stream ends there with
// the line named.
func TestALineWithNoEndEndsTheRecording(t *testing.T) {
	lines := smallRecording(t, 5)
	e := &testfiles.Endless{Most: 8 * maxLineRead}
	rec, err := NewRecording(io.MultiReader(strings.NewReader(strings.Join(lines, "")), e))
	if err != nil {
		t.Fatal(err)
	}
	res, err := sampler.RecordingWindows(rec, Name, nil)
	if err != nil || res.Samples != 4 || !strings.Contains(strings.Join(res.Warnings, "\n"), "line 7: more than 16 MiB without a line's end") {
		t.Errorf("%v: %d windows, warnings %q", err, res.Samples, res.Warnings)
	}
	if e.Given > maxLineRead+1<<20 {
		t.Errorf("%d bytes read of a line with no end", e.Given)
	}
}

// A recording is told from its first line however long, after a byte
// order mark; a first line that names the type and does not parse is a
// broken header; a newer schema is told as such whatever else the line
// holds or however long it is.
func TestAHeaderIsToldFromItsFirstLine(t *testing.T) {
	long := strings.Repeat("M", 1000)
	readings := strings.Join(smallRecording(t, 3)[1:], "")
	for _, c := range []struct {
		name, header string
		want         error // nil: read
	}{
		{"long", `{"type":"ioreport-recording","schema_version":1,"hw_model":"` + long + `","interval_seconds":0.1}`, nil},
		{"after a byte order mark", "\ufeff" + `{"type":"ioreport-recording","schema_version":1,"interval_seconds":0.1}`, nil},
		{"with white space", ` { "type" : "ioreport-recording", "schema_version": 1 }`, nil},
		{"with a NaN", `{"type":"ioreport-recording","schema_version":1,"interval_seconds":NaN}`, ErrBrokenHeader},
		{"with a field of the wrong type", `{"type":"ioreport-recording","schema_version":1,"hw_model":7}`, ErrBrokenHeader},
		{"of no schema", `{"type":"ioreport-recording"}`, ErrBrokenHeader},
		{"over MaxLine", `{"type":"ioreport-recording","schema_version":1,"hw_model":"` + strings.Repeat("M", MaxLine) + `"}`, ErrBrokenHeader},
		{"newer, long", `{"type":"ioreport-recording","schema_version":3,"hw_model":"` + long + `"}`, ErrNewerRecording},
		{"newer, with a NaN", `{"type":"ioreport-recording","schema_version":3,"interval_seconds":NaN}`, ErrNewerRecording},
		{"newer, with new fields", `{"schema_version":3,"type":"ioreport-recording","clock":{"kind":"boot"}}`, ErrNewerRecording},
		{"newer, over MaxLine", `{"type":"ioreport-recording","schema_version":3,"hw_model":"` + strings.Repeat("M", MaxLine) + `"}`, ErrNewerRecording},
	} {
		file := c.header + "\n" + readings
		isRec, whole, err := Sniff(strings.NewReader(file))
		if err != nil || !isRec {
			t.Errorf("%s: Sniff = %v, %v: not told a recording", c.name, isRec, err)
			continue
		}
		if b, _ := io.ReadAll(whole); string(b) != file {
			t.Errorf("%s: Sniff did not give the file back whole", c.name)
		}
		rec, err := NewRecording(strings.NewReader(file))
		if !errors.Is(err, c.want) || (err == nil) != (c.want == nil) {
			t.Errorf("%s: NewRecording = %v, want %v", c.name, err, c.want)
			continue
		}
		if err == nil {
			if res, err := sampler.RecordingWindows(rec, Name, nil); err != nil || res.Samples != 2 {
				t.Errorf("%s: %v, %d windows", c.name, err, res.Samples)
			}
		}
	}
}

// What is not a recording is told at once, without reading its first
// line whole: a plist, CSV, a JSON line of another type.
func TestWhatIsNoRecordingIsToldSo(t *testing.T) {
	for _, head := range []string{
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist>",
		"\ufeff<?xml version=\"1.0\"?>",
		"start_seconds,end_seconds\n0,1\n",
		`{"type":"window","index":0}` + "\n",
		"\n" + `{"type":"ioreport-recording","schema_version":1}` + "\n",
		"",
	} {
		isRec, whole, err := Sniff(strings.NewReader(head))
		if err != nil || isRec {
			t.Errorf("%q: Sniff = %v, %v", head, isRec, err)
		}
		if b, _ := io.ReadAll(whole); string(b) != head {
			t.Errorf("%q: given back as %q", head, b)
		}
	}
	// A file of NULs is told from its first byte, not read to MaxLine.
	e := &testfiles.Endless{Most: 1 << 20}
	if isRec, _, err := Sniff(e); isRec || err != nil || e.Given > 64<<10 {
		t.Errorf("NULs: Sniff = %v, %v after %d bytes", isRec, err, e.Given)
	}
}
