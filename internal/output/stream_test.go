package output_test

import (
	"bytes"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/fakepm"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/power"
	"github.com/exopower/exopower/internal/sampler"
	"github.com/exopower/exopower/internal/source"
	"github.com/exopower/exopower/internal/wire"
)

// benchRecording is an IOReport recording of n readings 100 ms apart.
func benchRecording(t *testing.T, n int) []byte {
	t.Helper()
	prof, err := fakepm.ParseProfile(fakepm.DefaultProfile)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := fakepm.WriteBenchRecording(&b, prof, 100*time.Millisecond, n); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func fileBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Rows written as the windows are read are the rows of every window kept
// and described once the recording is read, byte for byte, in both
// formats: a powermetrics recording, a cut one, and IOReport recordings
// shorter and longer than the windows held for the end.
func TestRowsWrittenAsTheyComeAreTheRowsOfTheWholeRecording(t *testing.T) {
	ultra := fileBytes(t, "../../testdata/fake-ultra-compact.plist")
	long := benchRecording(t, 3000)
	for _, c := range []struct {
		name string
		in   []byte
	}{
		{"a powermetrics recording", ultra},
		{"a powermetrics recording cut in a document", fileBytes(t, "../../testdata/fake-m1-truncated.plist")},
		{"an IOReport recording of 10 readings", benchRecording(t, 10)},
		{"an IOReport recording of 3000 readings", long},
		{"an IOReport recording cut in a line", long[:len(long)-40]},
	} {
		for _, f := range []output.SamplesFormat{output.SamplesCSV, output.SamplesNDJSON} {
			var log output.WindowLog
			var got, want bytes.Buffer
			sw := output.NewSampleWriter(&got, f)
			res, err := source.RecordingFrom(bytes.NewReader(c.in), func(o source.Origin, w sampler.Window, tot sampler.Totals) {
				log.Add(w, tot)
				sw.Add(wire.Source{Tool: o.Source, HWModel: o.HWModel, OSBuild: o.OSBuild}, w, tot)
			})
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			warnings := slices.Clone(res.Warnings)
			if err := sw.Close(&res); err != nil {
				t.Fatal(err)
			}
			if err := output.WriteSamples(&want, f, log.Rows(res)); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) || res.Samples < 2 {
				t.Errorf("%s, %s: %d bytes of rows as they came, %d of the whole recording's (%d windows)", c.name, f, got.Len(), want.Len(), res.Samples)
			}
			if !slices.Equal(res.Warnings, warnings) {
				t.Errorf("%s, %s: Close warned %q", c.name, f, res.Warnings[len(warnings):])
			}
		}
	}
}

// steady hands sw and log n windows of 100 ms at 10 W from t, each with
// the span's totals from t.
func steady(sw *output.SampleWriter, log *output.WindowLog, t time.Time, n int) {
	var e power.Values
	for i := range n {
		w := sampler.Window{Index: i, Start: t.Add(time.Duration(i) * 100 * time.Millisecond), Power: power.Values{CPU: 10, Total: 10}, Has: power.Reported{CPU: true}}
		w.End = w.Start.Add(100 * time.Millisecond)
		e = e.Add(w.Power.Scale(0.1))
		tot := sampler.Totals{Elapsed: w.End.Sub(t), Energy: e}
		sw.Add(wire.Source{Tool: "ioreport"}, w, tot)
		log.Add(w, tot)
	}
}

// A span that ends before its last windows do (run's, closed at the
// command's end) leaves out the windows that start at or after the end
// and clips the one across it, as the whole span's rows do; one that ends
// before windows already written says so.
func TestRowsWrittenAsTheyComeKeepTheSpansEnd(t *testing.T) {
	t0 := time.Unix(1796300000, 0)
	for _, c := range []struct {
		name    string
		windows int
		end     time.Duration
		warns   bool
	}{
		{"the end inside the last window", 50, 4950 * time.Millisecond, false},
		{"the end ten windows before the last", 50, 4 * time.Second, false},
		{"the end inside the windows held, of many", 3000, 290 * time.Second, false},
		{"the end before windows written", 3000, 100 * time.Second, true},
	} {
		var log output.WindowLog
		var got, want bytes.Buffer
		sw := output.NewSampleWriter(&got, output.SamplesCSV)
		steady(sw, &log, t0, c.windows)
		res := sampler.Result{Start: t0, Duration: c.end, Energy: power.Values{CPU: 10 * c.end.Seconds(), Total: 10 * c.end.Seconds()}, Source: "ioreport"}
		if err := sw.Close(&res); err != nil {
			t.Fatal(err)
		}
		output.WriteSamples(&want, output.SamplesCSV, log.Rows(res))
		if warned := len(res.Warnings) > 0; warned != c.warns {
			t.Errorf("%s: warnings %q", c.name, res.Warnings)
		}
		if !c.warns && got.String() != want.String() {
			t.Errorf("%s: the rows differ:\n%s", c.name, firstDifference(got.String(), want.String()))
		}
	}
}

func firstDifference(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return "got  " + g[i] + "\nwant " + w[i]
		}
	}
	return "one has more lines"
}

type failing struct{ err error }

func (f failing) Write([]byte) (int, error) { return 0, f.err }

// A write that fails stops the rows: Err says why as soon as it fails,
// later windows are let go, and Close returns the error.
func TestRowsStopAtAFailedWrite(t *testing.T) {
	broken := errors.New("broken pipe")
	sw := output.NewSampleWriter(failing{broken}, output.SamplesNDJSON)
	var log output.WindowLog
	steady(sw, &log, time.Unix(1796300000, 0), 3000)
	if !errors.Is(sw.Err(), broken) {
		t.Errorf("Err after 3000 windows: %v", sw.Err())
	}
	res := sampler.Result{Start: time.Unix(1796300000, 0), Duration: 300 * time.Second}
	if err := sw.Close(&res); !errors.Is(err, broken) {
		t.Errorf("Close: %v", err)
	}
}
