package ioreport

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/sampler"
)

// plugRecording is a recording of 10 readings 100 ms apart with plug's
// readings after each (the plug's header when plug is not nil), each
// plug reading 50 ms after its reading, at 30 W and a counter of 3 J
// per reading; lines are put at the end, after the readings.
func plugRecording(t *testing.T, start time.Time, plug *PlugInfo, more ...string) string {
	t.Helper()
	var buf bytes.Buffer
	channels := []Channel{{Group: Group, Name: "CPU Energy", Unit: "mJ"}}
	rec, err := NewRecorder(&buf, Header{HWModel: "Mac13,2", IntervalSeconds: 0.1, Wall: plug}, channels)
	if err != nil {
		t.Fatal(err)
	}
	for k := range 10 {
		at := start.Add(time.Duration(k) * 100 * time.Millisecond)
		if err := rec.Write(Reading{At: at, Unix: at, Values: []int64{int64(k) * 1000}, System: 40, HasSystem: true}, start); err != nil {
			t.Fatal(err)
		}
		if plug != nil {
			rec.w.Write(PlugLine(PlugReading{At: at.Add(50 * time.Millisecond), Power: 30, HasPower: true, Counter: float64(3 * k), HasCounter: true}, start))
		}
	}
	rec.w.Flush()
	return buf.String() + strings.Join(more, "")
}

var testPlug = &PlugInfo{Kind: "shelly-gen2", Model: "SNPL-00112EU", Address: "shelly://10.0.0.20", CounterResolutionJoules: 3.6, HasCounter: true, HasPower: true, IntervalSeconds: 1}

// A recording with a plug is of schema 2; its plug's readings are kept
// aside, on the readings' timeline, and its windows are those of the
// same recording without them.
func TestARecordingKeepsItsPlugsReadingsAside(t *testing.T) {
	start := time.Unix(1796300000, 0)
	text := plugRecording(t, start, testPlug)
	if !strings.HasPrefix(text, `{"type":"ioreport-recording","schema_version":2,`) {
		t.Fatalf("header: %.120s", text)
	}
	rec, err := NewRecording(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	res, err := sampler.RecordingWindows(rec, Name, nil)
	if err != nil || res.Samples != 9 || strings.Contains(strings.Join(res.Warnings, "\n"), "line") {
		t.Fatalf("%v: %d windows, warnings %q", err, res.Samples, res.Warnings)
	}
	info, readings := rec.Plug()
	if *info != *testPlug || len(readings) != 10 {
		t.Fatalf("plug %+v, %d readings", info, len(readings))
	}
	// Placed by their mono_ns from the first reading's wall clock.
	if got, want := readings[3].At, start.Add(350*time.Millisecond); !got.Equal(want) || readings[3].Power != 30 || readings[3].Counter != 9 || !readings[3].HasCounter {
		t.Errorf("reading 3: %+v, want at %v", readings[3], want)
	}
}

// A plug's reading is refused where it cannot be placed or be true; a
// recording joined on with another plug gives none of its readings, and
// says so; a schema newer than 2 is refused.
func TestAPlugsReadingThatCannotBeIsRefused(t *testing.T) {
	start := time.Unix(1796300000, 0)
	for _, c := range []struct {
		name, text, want string
	}{
		{"no plug in the header", plugRecording(t, start, nil, `{"type":"wall","mono_ns":1,"unix_ns":1,"power_w":3}`+"\n"), "no plug in the header"},
		{"no power or energy", plugRecording(t, start, testPlug, `{"type":"wall","mono_ns":1,"unix_ns":1}`+"\n"), "without a power or an energy"},
	} {
		rec, err := NewRecording(strings.NewReader(c.text))
		if err != nil {
			t.Fatal(err)
		}
		res, err := sampler.RecordingWindows(rec, Name, nil)
		if err != nil || !strings.Contains(strings.Join(res.Warnings, "\n"), c.want) {
			t.Errorf("%s: %v, warnings %q", c.name, err, res.Warnings)
		}
	}
	other := *testPlug
	other.Address = "shelly://10.0.0.21"
	rec, _ := NewRecording(strings.NewReader(plugRecording(t, start, testPlug) + plugRecording(t, start.Add(time.Hour), &other)))
	res, err := sampler.RecordingWindows(rec, Name, nil)
	if _, readings := rec.Plug(); err != nil || res.Samples != 18 || len(readings) != 10 || !strings.Contains(strings.Join(rec.Warnings(), "\n"), "recordings of different plugs") {
		t.Errorf("joined with another plug: %v, %d readings, warnings %q", err, len(readings), rec.Warnings())
	}
	if _, err := NewRecording(strings.NewReader(`{"type":"ioreport-recording","schema_version":3}` + "\n")); err == nil || !strings.Contains(err.Error(), "reads versions 1 and 2") {
		t.Errorf("schema 3: %v", err)
	}
}
