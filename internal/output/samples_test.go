package output

import (
	"bytes"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/power"
	"github.com/exopower/exopower/internal/powermetrics"
	"github.com/exopower/exopower/internal/sampler"
	"github.com/exopower/exopower/internal/wire"
)

var t0 = time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC)

func at(seconds float64) time.Time { return t0.Add(time.Duration(seconds * float64(time.Second))) }

func watts(total float64) power.Values {
	return power.Values{CPU: total * 0.75, GPU: total * 0.25, Total: total}
}

// logOf keeps windows as a span would be handed them: each with the span's
// energy from t0 to the window's end, for steady power in each window.
func logOf(ws ...sampler.Window) *WindowLog {
	var l WindowLog
	var e power.Values
	for _, w := range ws {
		from := max(0, w.Start.Sub(t0).Seconds())
		e = e.Add(w.Power.Scale(w.End.Sub(t0).Seconds() - from))
		l.Add(w, sampler.Totals{Elapsed: w.End.Sub(t0), Energy: e})
	}
	return &l
}

func TestRowsOfASpanClipTheirEdgesAndSumToItsEnergy(t *testing.T) {
	l := logOf(
		sampler.Window{Index: 4, Start: at(-0.05), End: at(0.05), Power: watts(10)},
		sampler.Window{Index: 5, Start: at(0.05), End: at(0.15), Power: watts(20)},
		sampler.Window{Index: 6, Start: at(0.15), End: at(0.25), Power: watts(10)},
		// Arrived before the span was closed, but starts at its end.
		sampler.Window{Index: 7, Start: at(0.25), End: at(0.35), Power: watts(99)},
	)
	res := sampler.Result{Start: t0, Duration: 200 * time.Millisecond, Energy: watts(10).Scale(0.05 + 0.05).Add(watts(20).Scale(0.1))}
	rows := l.Rows(res)
	if len(rows) != 3 {
		t.Fatalf("got %d rows, want 3 (the window that starts at the end is not the span's)", len(rows))
	}
	want := []struct {
		index                  int
		start, inside, joules  float64
		clippedStart, clippedE bool
	}{
		{4, -0.05, 0.05, 0.5, true, false},
		{5, 0.05, 0.1, 2, false, false},
		{6, 0.15, 0.05, 0.5, false, true},
	}
	var sum float64
	for i, w := range want {
		r := rows[i]
		if r.Index != w.index || !near(float64(r.StartSeconds), w.start) || !near(float64(r.InsideSeconds), w.inside) ||
			!near(float64(r.EnergyJoules.Total), w.joules) || r.ClippedStart != w.clippedStart || r.ClippedEnd != w.clippedE {
			t.Errorf("row %d = %+v, want %+v", i, r, w)
		}
		sum += float64(r.EnergyJoules.Total)
	}
	if !near(sum, res.Energy.Total) {
		t.Errorf("the rows' joules add up to %v, the span's energy is %v", sum, res.Energy.Total)
	}
	if got := float64(rows[0].StartUnix); !near(got, float64(t0.Unix())-0.05) {
		t.Errorf("start_unix = %f, want %f", got, float64(t0.Unix())-0.05)
	}
}

func TestRowsSayWhereAGapAndARefusedDocumentWere(t *testing.T) {
	l := logOf(
		sampler.Window{Index: 0, Start: at(0), End: at(0.1), Power: watts(10)},
		sampler.Window{Index: 2, Start: at(0.25), End: at(0.35), Power: watts(10)},
	)
	// The bridge over the gap counts for the row after it.
	res := sampler.Result{Start: t0, Duration: 350 * time.Millisecond, Energy: watts(10).Scale(0.35)}
	rows := l.Rows(res)
	if len(rows) != 2 {
		t.Fatalf("got %d rows, want 2", len(rows))
	}
	if rows[0].GapBeforeSeconds != 0 || rows[0].RefusedBefore != 0 {
		t.Errorf("first row: gap %v, refused %d; want none", rows[0].GapBeforeSeconds, rows[0].RefusedBefore)
	}
	if !near(float64(rows[1].GapBeforeSeconds), 0.15) || rows[1].RefusedBefore != 1 {
		t.Errorf("second row: gap %v s, refused %d; want 0.15 s and 1", rows[1].GapBeforeSeconds, rows[1].RefusedBefore)
	}
	if !near(float64(rows[1].EnergyJoules.Total), 2.5) {
		t.Errorf("second row: %v J, want 2.5 J (its window and the bridge before it)", rows[1].EnergyJoules.Total)
	}
}

func TestRowsOfARecordingAreOrderedUnclippedAndSumToItsEnergy(t *testing.T) {
	f, err := os.Open("../../testdata/fake-ultra-compact.plist")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var l WindowLog
	res, err := sampler.RecordingWindows(powermetrics.NewRecording(f), "powermetrics", l.Add)
	if err != nil {
		t.Fatal(err)
	}
	rows := l.Rows(res)
	if len(rows) != res.Samples || len(rows) < 2 {
		t.Fatalf("got %d rows of %d samples", len(rows), res.Samples)
	}
	var sum power.Values
	for i, r := range rows {
		if r.ClippedStart || r.ClippedEnd {
			t.Errorf("row %d is clipped; a recording's span is its windows", i)
		}
		if i > 0 && r.StartSeconds < rows[i-1].EndSeconds {
			t.Errorf("row %d starts at %v, before the row ahead ends (%v)", i, r.StartSeconds, rows[i-1].EndSeconds)
		}
		sum = sum.Add(power.Values{CPU: float64(r.EnergyJoules.CPU), GPU: float64(r.EnergyJoules.GPU),
			ANE: float64(r.EnergyJoules.ANE), Total: float64(r.EnergyJoules.Total)})
	}
	for name, p := range map[string][2]float64{"cpu": {sum.CPU, res.Energy.CPU}, "gpu": {sum.GPU, res.Energy.GPU},
		"ane": {sum.ANE, res.Energy.ANE}, "total": {sum.Total, res.Energy.Total}} {
		if !near(p[0], p[1]) {
			t.Errorf("%s: the rows add up to %v J, the recording's energy is %v J", name, p[0], p[1])
		}
	}
	if rows[0].StartSeconds != 0 || !near(float64(rows[len(rows)-1].EndSeconds), res.Duration.Seconds()) {
		t.Errorf("rows run from %v to %v s, want 0 to %v", rows[0].StartSeconds, rows[len(rows)-1].EndSeconds, res.Duration.Seconds())
	}
}

// The rows read back as written, the command and the source too, in
// both formats.
func TestSamplesReadBackAsWrittenInBothFormats(t *testing.T) {
	rows := logOf(
		sampler.Window{Index: 0, Start: at(-0.02), End: at(0.1), Power: watts(10), ThermalPressure: "Nominal"},
		sampler.Window{Index: 3, Start: at(0.2), End: at(0.3), Power: watts(1.0 / 3)},
	).Rows(sampler.Result{Start: t0, Duration: 250 * time.Millisecond, Energy: watts(1), Source: "powermetrics", HWModel: "Mac14,14", OSBuild: "23E224"})
	for i := range rows {
		rows[i].Command = []string{"sh", "-c", "echo 'a b' >/dev/null", ""}
	}
	// At the wall: the first row read whole, the second's window by no
	// reading of the plug, but its part of the span by one.
	p, e0, e1 := wire.Num(41.5), wire.Num(4.15), wire.Num(0.5)
	rows[0].Wall, rows[1].Wall = &RowWall{PowerWatts: &p, EnergyJoules: &e0}, &RowWall{EnergyJoules: &e1}
	if rows[0].Source != (wire.Source{Tool: "powermetrics", HWModel: "Mac14,14", OSBuild: "23E224"}) {
		t.Errorf("a row's source is %+v, want the span's", rows[0].Source)
	}
	for _, f := range []SamplesFormat{SamplesCSV, SamplesNDJSON} {
		var buf bytes.Buffer
		if err := WriteSamples(&buf, f, rows); err != nil {
			t.Fatal(err)
		}
		got, err := ReadSamples(&buf)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if !reflect.DeepEqual(got, roundTrip(rows)) {
			t.Errorf("%s: read back\n%+v\nwrote\n%+v", f, got, rows)
		}
	}
}

// roundTrip is rows as written: 12 significant digits, microseconds.
func roundTrip(rows []SampleRow) []SampleRow {
	var buf bytes.Buffer
	WriteSamples(&buf, SamplesNDJSON, rows)
	out, _ := ReadSamples(&buf)
	return out
}

func TestSamplesFilesThatAreNotAreRefused(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"a plist", "<?xml version=\"1.0\"?>\n<plist/>\n", "the first line is not the header"},
		{"a summary", `{"schema_version":1,"type":"summary"}` + "\n", `row 1: not a samples file (CSV or NDJSON from --samples): its type is "summary"`},
		// A file of the 19 columns before DRAM's and the system's.
		{"a CSV with a word for a number", strings.Join(SamplesHeader[:19], ",") + "\n1,x,0,0,0,0,0,0,0,0,0,0,0,0,false,false,0,0,\n", `line 2: not a samples file (CSV or NDJSON from --samples): start_seconds: "x" is not a number`},
		{"a CSV with a column too many", strings.Join(SamplesHeader, ",") + ",more\n", "the first line is not the header"},
		// A file of the 27 columns before the wall's.
		{"a CSV whose command ends in a quote", strings.Join(SamplesHeader[:27], ",") + "\n1,0,0,0,0,0,0,0,0,0,0,0,0,0,false,false,0,0,,,,,,sh 'x,powermetrics,,\n",
			`line 2: not a samples file (CSV or NDJSON from --samples): command: "sh 'x" ends inside a quote or after a backslash`},
	} {
		_, err := ReadSamples(strings.NewReader(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one that says %q", tc.name, err, tc.want)
		}
	}
}

func TestSamplesFormatComesFromTheExtension(t *testing.T) {
	for path, want := range map[string]SamplesFormat{"w.csv": SamplesCSV, "w.CSV": SamplesCSV, "w.ndjson": SamplesNDJSON, "a/w.jsonl": SamplesNDJSON} {
		if got, err := SamplesFormatOf(path); got != want || err != nil {
			t.Errorf("%s: %q, %v; want %q", path, got, err, want)
		}
	}
	for _, path := range []string{"w", "w.json", "w.txt"} {
		if _, err := SamplesFormatOf(path); err == nil || !strings.Contains(err.Error(), "--samples-format") {
			t.Errorf("%s: error %v, want one that points to --samples-format", path, err)
		}
	}
}

// The files of earlier versions, without the memory's and the system's
// columns, without the command's and the source's, or without the
// wall's, still read.
func TestSamplesOfEarlierVersionsRead(t *testing.T) {
	p := wire.Num(40)
	for _, n := range []int{19, 23, 27} {
		row := SampleRow{Index: 7, Command: []string{"x"}, Source: wire.Source{Tool: "ioreport"}, Wall: &RowWall{PowerWatts: &p}}
		in := strings.Join(SamplesHeader[:n], ",") + "\n" + strings.Join(csvRecord(row)[:n], ",") + "\n"
		rows, err := ReadSamples(strings.NewReader(in))
		withSource := n >= 27
		if err != nil || len(rows) != 1 || rows[0].Index != 7 || (rows[0].Command != nil) != withSource || (rows[0].Source.Tool == "ioreport") != withSource || rows[0].Wall != nil {
			t.Errorf("%d columns: %+v, %v", n, rows, err)
		}
	}
}

// ShellSplit reads back what ShellQuote wrote.
func TestShellSplitReadsBackShellQuote(t *testing.T) {
	for _, argv := range [][]string{
		{"true"},
		{"sh", "-c", "echo 'it''s' \\ \"q\" $HOME"},
		{"a b", "", "x'", "'"},
		{"ünïcode", "tab\there"},
	} {
		got, err := ShellSplit(ShellQuote(argv))
		if err != nil || !reflect.DeepEqual(got, argv) {
			t.Errorf("%q: read back %q, %v", argv, got, err)
		}
	}
	for in, want := range map[string][]string{"": nil, "  a   b ": {"a", "b"}, `a\ b`: {"a b"}} {
		if got, err := ShellSplit(in); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%q: %q, %v; want %q", in, got, err, want)
		}
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(b)) }

// The memory's and the system's columns read back where the source gave
// them, and stay empty (null) where it did not.
func TestSamplesKeepTheSystemsAndTheMemorysColumns(t *testing.T) {
	n := func(x float64) *wire.Num { v := wire.Num(x); return &v }
	rows := []SampleRow{
		{SchemaVersion: 1, Type: "window", PowerWatts: wire.Components{Total: 3, CPU: 3, DRAM: n(1.25), System: n(40)},
			EnergyJoules: wire.Components{Total: 0.3, CPU: 0.3, DRAM: n(0.125), System: n(4)}},
		{SchemaVersion: 1, Type: "window", Index: 1, PowerWatts: wire.Components{Total: 2, CPU: 2}, EnergyJoules: wire.Components{Total: 0.2, CPU: 0.2}},
	}
	for _, f := range []SamplesFormat{SamplesCSV, SamplesNDJSON} {
		var buf bytes.Buffer
		if err := WriteSamples(&buf, f, rows); err != nil {
			t.Fatal(err)
		}
		got, err := ReadSamples(&buf)
		if err != nil || len(got) != 2 || !reflect.DeepEqual(got[0].PowerWatts, rows[0].PowerWatts) || !reflect.DeepEqual(got[0].EnergyJoules, rows[0].EnergyJoules) ||
			got[1].PowerWatts.System != nil || got[1].EnergyJoules.DRAM != nil {
			t.Errorf("%s: %+v, %v", f, got, err)
		}
	}
}
