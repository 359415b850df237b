package output

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/cost"
	"github.com/exopower/exopower/internal/power"
	"github.com/exopower/exopower/internal/sampler"
	"github.com/exopower/exopower/internal/wire"
)

func TestShellQuoteQuotesOnlyWhatTheShellWouldReadOtherwise(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{nil, ""},
		{[]string{"make", "-j8", "all"}, "make -j8 all"},
		{[]string{"go", "test", "./...", "-run=Foo,Bar", "user@host:~/x%+"}, "go test ./... -run=Foo,Bar 'user@host:~/x%+'"},
		{[]string{"echo", "a b"}, "echo 'a b'"},
		{[]string{"echo", ""}, "echo ''"},
		{[]string{"echo", "it's"}, `echo 'it'\''s'`},
		{[]string{"sh", "-c", "echo $HOME; ls *"}, "sh -c 'echo $HOME; ls *'"},
		{[]string{"grüß"}, "'grüß'"},
	} {
		if got := ShellQuote(tc.argv); got != tc.want {
			t.Errorf("ShellQuote(%q) = %s, want %s", tc.argv, got, tc.want)
		}
	}
}

func ExampleShellQuote() {
	fmt.Println(ShellQuote([]string{"sh", "-c", "echo it's $HOME"}))
	// Output: sh -c 'echo it'\''s $HOME'
}

func TestNumbersForPeopleKeepFourOrMoreDigits(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{Seconds(0), "0.000 s"},
		{Seconds(9.9994), "9.999 s"},
		{Seconds(10), "10.0 s"},
		{Seconds(3725.25), "3725.2 s"},
		{Percent(1), "100%"},
		{Percent(1.2), "100%"},
		{Percent(0.99999), "99.9%"},
		{Percent(0.5), "50.0%"},
		{Percent(0), "0.0%"},
		{Joules(0.0015), "0.002 J"},
		{Joules(9.5), "9.500 J"},
		{Joules(10), "10.00 J"},
		{Joules(999.5), "999.50 J"},
		{Joules(1000), "1000.0 J"},
		{Watts(0.5), "0.500 W"},
		{Watts(10), "10.00 W"},
		{Watts(123.456), "123.46 W"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// testResult is 2.5 s of measurement, its average the energy over it.
func testResult() sampler.Result {
	return sampler.Result{
		Start:    time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC),
		Duration: 2500 * time.Millisecond,
		Energy:   power.Values{CPU: 10, GPU: 2, ANE: 0.5, Total: 12.5},
		Average:  power.Values{CPU: 4, GPU: 0.8, ANE: 0.2, Total: 5},
		Peak:     power.Values{CPU: 6, GPU: 1.5, ANE: 0.3, Total: 7.8},
		Samples:  25, Coverage: 0.8, Source: "powermetrics", HWModel: "Mac14,14", OSBuild: "23E224", ThermalPressure: "Nominal",
	}
}

func TestNewSummaryDescribesAResult(t *testing.T) {
	started := time.Date(2026, 3, 1, 13, 0, 0, 5, time.FixedZone("CET", 3600))
	got := NewSummary(testResult(), started, 100*time.Millisecond)
	want := &wire.Summary{
		SchemaVersion: 1, Type: "summary", StartedAt: "2026-03-01T12:00:00.000000005Z",
		DurationSeconds: 2.5, IntervalSeconds: 0.1, Samples: 25, Coverage: 0.8, Scope: "soc",
		Source:        wire.Source{Tool: "powermetrics", HWModel: "Mac14,14", OSBuild: "23E224"},
		EnergyJoules:  wire.Components{Total: 12.5, CPU: 10, GPU: 2, ANE: 0.5},
		AvgPowerWatts: wire.Components{Total: 5, CPU: 4, GPU: 0.8, ANE: 0.2},
		// 80 % of the 2.5 s measured: the energy over 2 s.
		MeasuredAvgPowerWatts: &wire.Components{Total: 6.25, CPU: 5, GPU: 1, ANE: 0.25},
		PeakPowerWatts:        wire.Components{Total: 7.8, CPU: 6, GPU: 1.5, ANE: 0.3},
		Warnings:              []string{},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	r := testResult()
	r.Warnings = []string{"lost 1 window"}
	if got := NewSummary(r, started, time.Second); !reflect.DeepEqual(got.Warnings, r.Warnings) {
		t.Errorf("warnings %q, want %q", got.Warnings, r.Warnings)
	}
}

// The JSON of a summary has every field, null where nothing is known,
// and never the title.
func TestSummaryJSONHasEveryFieldAndNoTitle(t *testing.T) {
	sum := NewSummary(testResult(), time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), 100*time.Millisecond)
	sum.Title = "watch"
	var b bytes.Buffer
	if err := WriteJSON(&b, sum); err != nil {
		t.Fatal(err)
	}
	want := `{"schema_version":1,"type":"summary","command":null,"exit_code":null,"signal":null,` +
		`"started_at":"2026-03-01T12:00:00Z","duration_seconds":2.5,"interval_seconds":0.1,"samples":25,"coverage":0.8,` +
		`"scope":"soc","source":{"tool":"powermetrics","hw_model":"Mac14,14","os_build":"23E224"},` +
		`"energy_joules":{"total":12.5,"cpu":10,"gpu":2,"ane":0.5,"dram":null,"system":null},"avg_power_watts":{"total":5,"cpu":4,"gpu":0.8,"ane":0.2,"dram":null,"system":null},` +
		`"measured_avg_power_watts":{"total":6.25,"cpu":5,"gpu":1,"ane":0.25,"dram":null,"system":null},` +
		`"peak_power_watts":{"total":7.8,"cpu":6,"gpu":1.5,"ane":0.3,"dram":null,"system":null},` +
		`"rails":{"cpu":{"refused_windows":0,"glitches":0,"still_seconds":0},"gpu":{"refused_windows":0,"glitches":0,"still_seconds":0},` +
		`"ane":{"refused_windows":0,"glitches":0,"still_seconds":0},"dram":{"refused_windows":0,"glitches":0,"still_seconds":0},` +
		`"system":{"refused_windows":0,"glitches":0,"still_seconds":0}},"warnings":[],"wall":null,"wall_estimated":null,"cost":null,"co2e":null}` + "\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	code, sig := 130, "SIGINT"
	sum.Command, sum.ExitCode, sum.Signal = []string{"sleep", "1"}, &code, &sig
	b.Reset()
	if err := WriteJSON(&b, sum); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"command":["sleep","1"],"exit_code":130,"signal":"SIGINT",`) {
		t.Errorf("no command, exit code and signal in %s", b.String())
	}
}

func TestWriteJSONReportsWhatItCannotWrite(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, wire.Num(math.NaN())); err == nil || b.Len() != 0 {
		t.Errorf("NaN: %v, wrote %q; want an error and nothing written", err, b.String())
	}
	if err := WriteJSON(failWriter{}, 1); !errors.Is(err, errWrite) {
		t.Errorf("a failing writer: %v, want %v", err, errWrite)
	}
}

func TestWriteTextSummarisesForPeople(t *testing.T) {
	code0, code130, sig := 0, 130, "SIGINT"
	// 80 % covered: the energy over the 2.5 s, and the power over the
	// 2 s measured, each labelled.
	table := "" +
		"                  energy  avg elapsed avg measured         peak\n" +
		"  total          12.50 J      5.000 W      6.250 W      7.800 W\n" +
		"  CPU            10.00 J      4.000 W      5.000 W      6.000 W\n" +
		"  GPU            2.000 J      0.800 W      1.000 W      1.500 W\n" +
		"  ANE            0.500 J      0.200 W      0.250 W      0.300 W\n" +
		"  average   elapsed: the energy over all 2.500 s; measured: the power over the 2.000 s that windows covered (80.0%)\n"
	tail := "" +
		"  scope     SoC: CPU + GPU + ANE (not the display, memory, SSD or the wall)\n" +
		"  source    powermetrics on Mac14,14, macOS build 23E224\n"
	for _, tc := range []struct {
		name string
		edit func(*wire.Summary)
		want string
	}{
		{"without a command or a title", func(*wire.Summary) {},
			"exopower\n  duration  2.500 s   25 samples, 80.0% covered\n" + table + tail},
		{"with a title and no command", func(s *wire.Summary) { s.Title = "watch" },
			"exopower watch\n  duration  2.500 s   25 samples, 80.0% covered\n" + table + tail},
		{"with a command and its exit code", func(s *wire.Summary) {
			s.Title, s.Command, s.ExitCode = "watch", []string{"make", "it's"}, &code0
		}, "exopower: make 'it'\\''s'\n  exit      0\n  duration  2.500 s   25 samples, 80.0% covered\n" + table + tail},
		{"with a signal that ended the command", func(s *wire.Summary) {
			s.Command, s.ExitCode, s.Signal = []string{"sleep", "9"}, &code130, &sig
		}, "exopower: sleep 9\n  exit      130 (SIGINT)\n  duration  2.500 s   25 samples, 80.0% covered\n" + table + tail},
		{"with warnings, one on two lines", func(s *wire.Summary) {
			s.Warnings = []string{"lost 1 window", "powermetrics: exit status 1\nstderr: no"}
		}, "exopower\n  duration  2.500 s   25 samples, 80.0% covered\n" + table + tail +
			"  warning: lost 1 window\n  warning: powermetrics: exit status 1\n    stderr: no\n"},
		{"with watt-hours when there are some, and an unknown machine", func(s *wire.Summary) {
			s.EnergyJoules.Total, s.Source = 36, wire.Source{Tool: "powermetrics"}
		}, "exopower\n  duration  2.500 s   25 samples, 80.0% covered\n" + strings.Replace(table, "12.50 J", "36.00 J", 1) +
			"            (total: 0.01 Wh)\n" + strings.Replace(tail, " on Mac14,14, macOS build 23E224", "", 1)},
		{"with one sample, in the singular", func(s *wire.Summary) { s.Samples = 1 },
			"exopower\n  duration  2.500 s   1 sample, 80.0% covered\n" + table + tail},
		// 12.5 J is 12.5 / 3.6e6 kWh: 1.0417e-6 EUR at 0.30, 0.153 mg at 44.18 g.
		{"with its cost and its CO2e", func(s *wire.Summary) {
			in, _ := cost.Grid("FR")
			cost.Rates{Price: &cost.Price{PerKWh: 0.30, Currency: "EUR", Source: "flag"}, Intensity: &in}.Summary(s)
		}, "exopower\n  duration  2.500 s   25 samples, 80.0% covered\n" + table +
			"  cost      0.00000104 EUR for the SoC's energy (CPU, GPU and ANE only: not the rest of the Mac, nor the wall) at 0.3 EUR/kWh (--price)\n" +
			"  CO2e      0.000153 g CO2e for the same energy at 44.18 g/kWh, " +
			"grid:FR (France, 2024: Ember yearly electricity data via CO2.js 0.19.0, CC BY-SA 4.0)\n" + tail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sum := NewSummary(testResult(), time.Time{}, time.Second)
			tc.edit(sum)
			var b bytes.Buffer
			if err := WriteText(&b, sum, &Styles{Plain: true}); err != nil {
				t.Fatal(err)
			}
			if b.String() != tc.want {
				t.Errorf("got\n%s\nwant\n%s", b.String(), tc.want)
			}
		})
	}
}

// Where every moment was measured, or none, the average is one: energy
// over elapsed is then the power while measured, or there is no such
// power.
func TestWriteTextGivesOneAverageWhereThereIsNoOther(t *testing.T) {
	whole := "" +
		"                  energy      average         peak\n" +
		"  total          12.50 J      5.000 W      7.800 W\n" +
		"  CPU            10.00 J      4.000 W      6.000 W\n" +
		"  GPU            2.000 J      0.800 W      1.500 W\n" +
		"  ANE            0.500 J      0.200 W      0.300 W\n" +
		"  scope     SoC: CPU + GPU + ANE (not the display, memory, SSD or the wall)\n" +
		"  source    powermetrics on Mac14,14, macOS build 23E224\n"
	for _, tc := range []struct {
		name     string
		coverage float64
		want     string
	}{
		{"every moment measured", 1, "exopower\n  duration  2.500 s   25 samples, 100% covered\n" + whole},
		{"nothing measured", 0, "exopower\n  duration  2.500 s   25 samples, 0.0% covered\n" + whole},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := testResult()
			r.Coverage = tc.coverage
			var b bytes.Buffer
			if err := WriteText(&b, NewSummary(r, time.Time{}, time.Second), &Styles{Plain: true}); err != nil {
				t.Fatal(err)
			}
			if b.String() != tc.want {
				t.Errorf("got\n%s\nwant\n%s", b.String(), tc.want)
			}
		})
	}
}

func TestWriteTextReportsWhatItCannotWrite(t *testing.T) {
	if err := WriteText(failWriter{}, NewSummary(testResult(), time.Time{}, time.Second), &Styles{Plain: true}); !errors.Is(err, errWrite) {
		t.Errorf("got %v, want %v", err, errWrite)
	}
}

// The text summary is coloured on a terminal that takes colour, and says
// the same as the plain one.
func TestWriteTextIsColouredOnlyOnATerminalThatTakesColour(t *testing.T) {
	sum := NewSummary(testResult(), time.Time{}, time.Second)
	sum.Warnings = []string{"lost 1 window"}
	var plain bytes.Buffer
	if err := WriteText(&plain, sum, &Styles{Plain: true}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		tty    bool
		getenv func(string) string
		colour bool
	}{
		{"on a 256-colour terminal", true, env("TERM", "xterm-256color"), true},
		{"with NO_COLOR", true, env("TERM", "xterm-256color", "NO_COLOR", "1"), false},
		{"under CI", true, env("TERM", "xterm-256color", "CI", "1"), false},
		{"with TERM=dumb", true, env("TERM", "dumb"), false},
		{"off a terminal", false, env("TERM", "xterm-256color"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteText(&b, sum, NewStyles(&b, tc.tty, tc.getenv)); err != nil {
				t.Fatal(err)
			}
			if got := sgr.MatchString(b.String()); got != tc.colour {
				t.Errorf("colour escapes: %v, want %v: %q", got, tc.colour, b.String())
			}
			if got := sgr.ReplaceAllString(b.String(), ""); got != plain.String() {
				t.Errorf("without its colours it reads\n%s\nnot\n%s", got, plain.String())
			}
		})
	}
}
