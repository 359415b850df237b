package ioreport

import (
	"bytes"
	"errors"
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

// A header's plug that no exopower wrote is a broken header, and its
// text is made safe; a plug's reading that goes back in time is left out,
// and said to be.
func TestARecordingsPlugIsHeldToBounds(t *testing.T) {
	start := time.Unix(1796300000, 0)
	for _, c := range []struct {
		name string
		edit func(*PlugInfo)
		want string
	}{
		{"an interval that overflows", func(p *PlugInfo) { p.IntervalSeconds = 5e9 }, "interval_seconds"},
		{"a counter in counts of nothing", func(p *PlugInfo) { p.CounterResolutionJoules = 0 }, "counter_resolution_joules"},
		{"a negative count", func(p *PlugInfo) { p.CounterResolutionJoules = -1 }, "counter_resolution_joules"},
		{"a count beyond a kilowatt-hour", func(p *PlugInfo) { p.CounterResolutionJoules = 1e12 }, "counter_resolution_joules"},
		{"neither counter nor power", func(p *PlugInfo) { p.HasCounter, p.HasPower, p.CounterResolutionJoules = false, false, 0 }, "neither"},
	} {
		p := *testPlug
		c.edit(&p)
		_, err := NewRecording(strings.NewReader(plugRecording(t, start, &p)))
		if !errors.Is(err, ErrBrokenHeader) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	p := *testPlug
	p.Model, p.Address = "SNPL\x1b]0;owned\a", "shelly://10.0.0.20\r\x1b[31mFAKE"
	back := `{"type":"wall","mono_ns":100000000,"unix_ns":1,"power_w":3000}` + "\n"
	rec, err := NewRecording(strings.NewReader(plugRecording(t, start, &p, back)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sampler.RecordingWindows(rec, Name, nil); err != nil {
		t.Fatal(err)
	}
	info, readings := rec.Plug()
	if strings.ContainsAny(info.Model+info.Address, "\x1b\a\r") || len(readings) != 10 || !strings.Contains(strings.Join(rec.Warnings(), "\n"), "1 of the plug's readings were left out") {
		t.Errorf("plug %q %q, %d readings, warnings %q", info.Model, info.Address, len(readings), rec.Warnings())
	}
}
