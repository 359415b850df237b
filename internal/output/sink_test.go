package output

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/power"
	"github.com/exopower/exopower/internal/sampler"
	"github.com/exopower/exopower/internal/wire"
)

func TestChooseFormatTakesJSONThenTheTerminalThenLines(t *testing.T) {
	for _, tc := range []struct {
		json, tty bool
		want      Format
	}{
		{json: true, tty: true, want: NDJSON},
		{json: true, tty: false, want: NDJSON},
		{json: false, tty: true, want: Panel},
		{json: false, tty: false, want: Lines},
	} {
		if got := ChooseFormat(tc.json, tc.tty); got != tc.want {
			t.Errorf("ChooseFormat(json %v, tty %v) = %v, want %v", tc.json, tc.tty, got, tc.want)
		}
	}
}

func TestFormatsAreNamed(t *testing.T) {
	for f, want := range map[Format]string{Lines: "lines", NDJSON: "ndjson", Panel: "panel", Format(7): "Format(7)"} {
		if got := f.String(); got != want {
			t.Errorf("Format(%d).String() = %q, want %q", int(f), got, want)
		}
	}
}

func TestNewSinkRefusesAFormatItDoesNotKnow(t *testing.T) {
	if s, err := NewSink(SinkConfig{Format: Format(7), Terminal: Terminal{Out: &bytes.Buffer{}}}); err == nil || s != nil {
		t.Errorf("NewSink(Format(7)) = %v, %v; want an error", s, err)
	}
}

// testWindow is a window of 250 ms that ends at 12:00:01.5 UTC, and the
// totals after it.
func testWindow() (sampler.Window, sampler.Totals) {
	end := time.Date(2026, 3, 1, 12, 0, 1, 500_000_000, time.UTC)
	w := sampler.Window{Start: end.Add(-250 * time.Millisecond), End: end, Index: 6, ThermalPressure: "Moderate",
		Power: power.Values{CPU: 12.3456, GPU: 0.5, ANE: 0, Total: 12.8456}}
	tot := sampler.Totals{Elapsed: 1500 * time.Millisecond, Samples: 6,
		Energy: power.Values{CPU: 15.25, GPU: 0.75, ANE: 0.001, Total: 16.001},
		Peak:   power.Values{CPU: 20, GPU: 1, ANE: 0.001, Total: 21}}
	return w, tot
}

// The lines sink writes one plain line per window: the window's end, its
// power and the energy since the start.
func TestLinesSinkWritesOnePlainLinePerWindow(t *testing.T) {
	term := &fakeTerminal{width: 80, height: 24}
	s, err := NewSink(SinkConfig{Format: Lines, Terminal: term.terminal(), Getenv: env("TERM", "xterm-256color")})
	if err != nil {
		t.Fatal(err)
	}
	w, tot := testWindow()
	if err := s.Window(w, tot); err != nil {
		t.Fatal(err)
	}
	w.ThermalPressure = ""
	if err := s.Window(w, tot); err != nil {
		t.Fatal(err)
	}
	if err := s.Resize(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	want := "12:00:01.500  total 12.85 W  CPU 12.35 W  GPU 0.500 W  ANE 0.000 W  energy 16.00 J  thermal Moderate\n" +
		"12:00:01.500  total 12.85 W  CPU 12.35 W  GPU 0.500 W  ANE 0.000 W  energy 16.00 J  thermal n/a\n"
	if got := term.String(); got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

// With a plug (watch --wall), each line leads with the wall's power now
// ("n/a" where it is not fresh), and gives its energy so far; each JSON
// line has its wall object.
func TestTheLinesLeadWithTheWall(t *testing.T) {
	watts := wire.Num(41.5)
	walls := []*wire.SampleWall{{PowerWatts: &watts, EnergyJoules: 123.25}, {EnergyJoules: 130}}
	next := func() *wire.SampleWall { w := walls[0]; walls = walls[1:]; return w }
	term := &fakeTerminal{width: 80, height: 24}
	s, err := NewSink(SinkConfig{Format: Lines, Terminal: term.terminal(), Wall: next})
	if err != nil {
		t.Fatal(err)
	}
	w, tot := testWindow()
	s.Window(w, tot)
	s.Window(w, tot)
	want := "12:00:01.500  wall 41.50 W  total 12.85 W  CPU 12.35 W  GPU 0.500 W  ANE 0.000 W  energy 16.00 J  wall energy 123.25 J  thermal Moderate\n" +
		"12:00:01.500  wall n/a  total 12.85 W  CPU 12.35 W  GPU 0.500 W  ANE 0.000 W  energy 16.00 J  wall energy 130.00 J  thermal Moderate\n"
	if got := term.String(); got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
	walls = []*wire.SampleWall{{PowerWatts: &watts, EnergyJoules: 123.25}}
	term = &fakeTerminal{width: 80, height: 24}
	s, _ = NewSink(SinkConfig{Format: NDJSON, Terminal: term.terminal(), Wall: next})
	s.Window(w, tot)
	if got := term.String(); !strings.HasSuffix(got, `,"wall":{"power_watts":41.5,"energy_joules":123.25}}`+"\n") {
		t.Errorf("the JSON line's wall: %s", got)
	}
}

// The NDJSON sink writes one JSON object per line, in the documented
// shape, the energy cumulative.
func TestNDJSONSinkWritesASampleLinePerWindow(t *testing.T) {
	term := &fakeTerminal{width: 80, height: 24, tty: true}
	s, err := NewSink(SinkConfig{Format: NDJSON, Terminal: term.terminal(), Getenv: env("TERM", "xterm-256color")})
	if err != nil {
		t.Fatal(err)
	}
	w, tot := testWindow()
	w.Start, w.End = w.Start.In(time.FixedZone("CET", 3600)), w.End.In(time.FixedZone("CET", 3600))
	if err := s.Window(w, tot); err != nil {
		t.Fatal(err)
	}
	if err := s.Resize(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	want := `{"schema_version":1,"type":"sample","time":"2026-03-01T12:00:01.5Z","window_seconds":0.25,` +
		`"power_watts":{"total":12.8456,"cpu":12.3456,"gpu":0.5,"ane":0,"dram":null,"system":null},` +
		`"energy_joules":{"total":16.001,"cpu":15.25,"gpu":0.75,"ane":0.001,"dram":null,"system":null},"thermal_pressure":"Moderate"}` + "\n"
	if got := term.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	var line map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSuffix(term.String(), "\n")), &line); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(term.String(), "\x1b") {
		t.Error("JSON with an escape sequence in it")
	}
}

// A sample line's time is the window's end in UTC, with nanoseconds.
func TestSampleLineTimeIsTheWindowsEndInUTC(t *testing.T) {
	w, tot := testWindow()
	w.End = time.Date(2026, 3, 1, 13, 0, 0, 123456789, time.FixedZone("CET", 3600))
	w.Start = w.End.Add(-time.Second)
	got := NewSampleLine(w, tot)
	want := wire.SampleLine{SchemaVersion: 1, Type: "sample", Time: "2026-03-01T12:00:00.123456789Z", WindowSeconds: 1,
		PowerWatts: wire.NewComponents(w.Power, w.Has), EnergyJoules: wire.NewComponents(tot.Energy, tot.Has), ThermalPressure: "Moderate"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

// The lines and NDJSON sinks return the error of a write that failed.
func TestSinksReportAWriteThatFailed(t *testing.T) {
	for _, f := range []Format{Lines, NDJSON} {
		s, err := NewSink(SinkConfig{Format: f, Terminal: Terminal{Out: failWriter{}}})
		if err != nil {
			t.Fatal(err)
		}
		w, tot := testWindow()
		if err := s.Window(w, tot); !errors.Is(err, errWrite) {
			t.Errorf("%v: %v, want %v", f, err, errWrite)
		}
	}
}

// The lines sink puts its line together without fmt, to spare work at
// every sample; it writes exactly what the format it replaced wrote.
func TestLinesAreWhatTheirFormatSays(t *testing.T) {
	values := []float64{0, 0.0004, 0.0005, 1.23456, 9.9994, 9.9995, 9.99951, 10, 99.995, 999.994, 999.995, 1000, 123456.78, -0.0001, -3}
	var got bytes.Buffer
	sink := &linesSink{out: &got}
	end := time.Date(2026, 3, 1, 12, 0, 7, 891234567, time.UTC)
	for i, v := range values {
		got.Reset()
		w := sampler.Window{End: end, Power: power.Values{Total: v, CPU: v / 3, GPU: v * 7, ANE: -v}}
		if i%2 == 0 {
			w.ThermalPressure = "Nominal"
		}
		tot := sampler.Totals{Energy: power.Values{Total: v * 100}}
		if err := sink.Window(w, tot); err != nil {
			t.Fatal(err)
		}
		watts := func(x float64) string {
			if x < 10 {
				return fmt.Sprintf("%.3f W", x)
			}
			return fmt.Sprintf("%.2f W", x)
		}
		joules := func(x float64) string {
			switch {
			case x < 10:
				return fmt.Sprintf("%.3f J", x)
			case x < 1000:
				return fmt.Sprintf("%.2f J", x)
			}
			return fmt.Sprintf("%.1f J", x)
		}
		want := fmt.Sprintf("%s  total %s  CPU %s  GPU %s  ANE %s  energy %s  thermal %s\n",
			end.Format("15:04:05.000"), watts(v), watts(v/3), watts(v*7), watts(-v), joules(v*100), or(w.ThermalPressure, "n/a"))
		if got.String() != want {
			t.Errorf("line %q, want %q", got.String(), want)
		}
	}
}
