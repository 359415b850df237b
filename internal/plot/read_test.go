package plot

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/power"
	"github.com/exopower/exopower/internal/wire"
)

// A node's windows that abut in its lines abut on the chart: in Unix
// seconds as a float64 their edges would part by a fraction of a
// microsecond, and the total would drop to the other node's power there.
func TestANodesWindowsThatAbutStayJoined(t *testing.T) {
	var lines strings.Builder
	ends := []string{"2026-12-03T10:58:41.135084074Z", "2026-12-03T10:58:41.236645448Z", "2026-12-03T10:58:41.33426548Z",
		"2026-12-03T10:58:41.450671157Z", "2026-12-03T10:58:41.578214533Z"}
	windows := []string{"0.091623672", "0.101561374", "0.097620032", "0.116405677", "0.127543376"}
	for i, end := range ends {
		for _, node := range []string{"ten", "twenty"} {
			fmt.Fprintf(&lines, `{"schema_version":1,"type":"sample","time":%q,"window_seconds":%s,"power_watts":{"total":10},"node":%q}`+"\n",
				end, windows[i], node)
		}
	}
	n, err := readNodeLines(strings.NewReader(lines.String()))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range n.Series {
		for i := 1; i < len(s.Windows); i++ {
			if s.Windows[i].Start != s.Windows[i-1].End {
				t.Errorf("%s: window %d starts at %.12f s, the one before ends at %.12f s", s.Name, i, s.Windows[i].Start, s.Windows[i-1].End)
			}
		}
	}
	if total := Total(n.Series); len(total) != 1 || total[0].Watts != 20 {
		t.Errorf("the total is %v, want one step of 20 W", total)
	}
}

// A picture is shared: its title names what was measured (a bench's
// commands, a watch's nodes), never the path of the file it was drawn
// from, which is the user's own.
func TestATitleNamesWhatWasMeasuredNotThePath(t *testing.T) {
	bench := `{"schema_version":1,"type":"bench","complete":true,"reference":0,"results":[` +
		`{"command":"sleep 0.1","runs":[{"energy_joules":{"total":1}}],"energy_joules":{"mean":1,"stddev":null,"median":1,"min":1,"max":1}},` +
		`{"command":"sleep 0.3","runs":[{"energy_joules":{"total":3}}],"energy_joules":{"mean":3,"stddev":null,"median":3,"min":3,"max":3}}]}`
	watch := `{"schema_version":1,"type":"sample","time":"2026-01-02T03:04:05Z","window_seconds":0.1,"power_watts":{"total":1},"node":"mac1"}` + "\n" +
		`{"schema_version":1,"type":"sample","time":"2026-01-02T03:04:05Z","window_seconds":0.1,"power_watts":{"total":2},"node":"mac2"}` + "\n"
	for _, tc := range []struct{ input, want string }{
		{bench, "exopower bench: sleep 0.1 and sleep 0.3"},
		{watch, "exopower watch: mac1 and mac2"},
	} {
		chart, err := Read(strings.NewReader(tc.input), "b.json")
		if err != nil {
			t.Fatal(err)
		}
		var buf strings.Builder
		if err := chart(&buf, SVG, Size{Width: 800, Height: 400}); err != nil {
			t.Fatal(err)
		}
		texts, _ := svgOf(t, []byte(buf.String()))
		all := strings.Join(texts, "\n")
		if !strings.Contains(all, tc.want) || strings.Contains(all, "b.json") {
			t.Errorf("texts %q: want %q, and not the file's name", texts, tc.want)
		}
	}
}

// watchOfThisMac are the lines of watch --json of this Mac alone: three
// windows of a second from 10:00:00, the first reaching before the
// watch's start, the summary at the end.
const watchOfThisMac = `{"schema_version":1,"type":"sample","time":"2026-01-02T10:00:00.5Z","window_seconds":1,"power_watts":{"total":15,"cpu":10,"gpu":4,"ane":1,"dram":null,"system":null},"energy_joules":{"total":7.5,"cpu":5,"gpu":2,"ane":0.5,"dram":null,"system":null}}
{"schema_version":1,"type":"sample","time":"2026-01-02T10:00:01.5Z","window_seconds":1,"power_watts":{"total":18,"cpu":12,"gpu":5,"ane":1,"dram":null,"system":null},"energy_joules":{"total":25.5,"cpu":17,"gpu":7,"ane":1.5,"dram":null,"system":null}}
{"schema_version":1,"type":"sample","time":"2026-01-02T10:00:02.5Z","window_seconds":1,"power_watts":{"total":16,"cpu":11,"gpu":4,"ane":1,"dram":null,"system":null},"energy_joules":{"total":41.5,"cpu":28,"gpu":11,"ane":2.5,"dram":null,"system":null}}
{"schema_version":1,"type":"summary","command":null,"started_at":"2026-01-02T10:00:00Z","duration_seconds":2.5,"source":{"tool":"powermetrics","hw_model":"Mac15,9","os_build":"24F74"},"energy_joules":{"total":41.5,"cpu":28,"gpu":11,"ane":2.5,"dram":null,"system":null},"avg_power_watts":{"total":16.6,"cpu":11.2,"gpu":4.4,"ane":1,"dram":null,"system":null}}
`

// plotted draws what Read makes of input as an SVG, and returns its
// texts.
func plotted(t *testing.T, input, name string) []string {
	t.Helper()
	chart, err := Read(strings.NewReader(input), name)
	if err != nil {
		t.Fatal(err)
	}
	var buf strings.Builder
	if err := chart(&buf, SVG, DefaultSize); err != nil {
		t.Fatal(err)
	}
	texts, _ := svgOf(t, []byte(buf.String()))
	return texts
}

// A picture names what was measured (the command, or the watch), the
// Mac's model and the source: a samples file that run wrote is titled by
// its command, not by the file's name.
func TestATitleNamesTheCommandTheMacAndTheSource(t *testing.T) {
	rows := []output.SampleRow{{SchemaVersion: 1, Type: "window", EndSeconds: 1, InsideSeconds: 1,
		PowerWatts: wire.Components{Total: 5, CPU: 5}, EnergyJoules: wire.Components{Total: 5, CPU: 5},
		Command: []string{"make", "-j", "8"}, Source: wire.Source{Tool: "powermetrics", HWModel: "Mac14,14", OSBuild: "23E224"}}}
	var samples bytes.Buffer
	if err := output.WriteSamples(&samples, output.SamplesCSV, rows); err != nil {
		t.Fatal(err)
	}
	bench := `{"schema_version":1,"type":"bench","complete":true,"source":{"tool":"ioreport","hw_model":"Mac15,9","os_build":"24F74"},"results":[` +
		`{"command":"sleep 0.1","runs":[{"energy_joules":{"total":1}}],"energy_joules":{"mean":1,"stddev":null,"median":1,"min":1,"max":1}}]}`
	nodes := `{"schema_version":1,"type":"sample","time":"2026-01-02T03:04:05Z","window_seconds":0.1,"power_watts":{"total":1},"node":"mac1"}` + "\n" +
		`{"schema_version":1,"type":"sample","time":"2026-01-02T03:04:05Z","window_seconds":0.1,"power_watts":{"total":2},"node":"mac2"}` + "\n" +
		`{"schema_version":1,"type":"summary","duration_seconds":0.1,"energy_joules":{"total":0.3},"avg_power_watts":{"total":3},"nodes":[` +
		`{"node":"mac1","label":"mac1","source":{"tool":"powermetrics","hw_model":"Mac14,14"}},{"node":"mac2","label":"mac2","source":{"tool":"ioreport","hw_model":"Mac15,9"}}]}` + "\n"
	for _, tc := range []struct {
		what, input string
		want        []string
	}{
		{"a samples file", samples.String(), []string{"exopower run -- make -j 8", "5 J over 1 s, 5 W on average", "Mac14,14 · powermetrics · macOS build 23E224", "time from the command's start (s)"}},
		{"a bench", bench, []string{"exopower bench: sleep 0.1", "Mac15,9 · ioreport · macOS build 24F74"}},
		{"a watch of two Macs", nodes, []string{"exopower watch: mac1 and mac2", "mac1: Mac14,14 · powermetrics; mac2: Mac15,9 · ioreport"}},
		{"a watch of this Mac", watchOfThisMac, []string{"exopower watch", "41.5 J over 2.5 s, 16.6 W on average (the shaded span)", "Mac15,9 · powermetrics · macOS build 24F74"}},
	} {
		texts := plotted(t, tc.input, "w.csv")
		for _, want := range tc.want {
			if !slices.Contains(texts, want) {
				t.Errorf("%s: no text %q in %q", tc.what, want, texts)
			}
		}
		if slices.ContainsFunc(texts, func(s string) bool { return strings.Contains(s, "w.csv") }) {
			t.Errorf("%s: the file's name in %q", tc.what, texts)
		}
	}
}

// The lines of watch --json of this Mac are drawn as a recording is: a
// line per component over the windows, in seconds from the watch's
// start, with the summary's figures.
func TestWatchLinesOfThisMacArePlotted(t *testing.T) {
	p, err := readMacLines(strings.NewReader(watchOfThisMac))
	if err != nil {
		t.Fatal(err)
	}
	want := []Window{
		{Start: -0.5, End: 0.5, Power: power.Values{Total: 15, CPU: 10, GPU: 4, ANE: 1}},
		{Start: 0.5, End: 1.5, Power: power.Values{Total: 18, CPU: 12, GPU: 5, ANE: 1}},
		{Start: 1.5, End: 2.5, Power: power.Values{Total: 16, CPU: 11, GPU: 4, ANE: 1}},
	}
	for i := range want {
		want[i].Has = power.Reported{CPU: true, GPU: true, ANE: true}
	}
	if !slices.Equal(p.Windows, want) || p.SpanEnd != 2.5 || p.Energy.Total != 41.5 || p.Average.Total != 16.6 {
		t.Errorf("windows %+v, span to %v s, %v J, %v W; want %+v over 2.5 s, 41.5 J, 16.6 W", p.Windows, p.SpanEnd, p.Energy.Total, p.Average.Total, want)
	}
	// Without the summary (a watch that did not end): from the first
	// window's start, the energy the last line counts, and a word of it.
	cut := strings.Join(strings.Split(watchOfThisMac, "\n")[:3], "\n")
	texts := plotted(t, cut, "w.ndjson")
	for _, s := range []string{"no summary line: the watch did not end", "41.5 J over 3 s, 13.83 W on average"} {
		if !slices.Contains(texts, s) {
			t.Errorf("no text %q in %q", s, texts)
		}
	}
	for _, tc := range []struct{ input, want string }{
		{watchOfThisMac + `{"schema_version":1,"type":"sample","time":"2026-01-02T10:00:03Z","window_seconds":1,"power_watts":{"total":1},"node":"mac1"}`,
			"line 5: a node's line amid the lines of watch --json of this Mac alone: plot takes the lines of one watch"},
		{`{"schema_version":1,"type":"sample","time":"yesterday","window_seconds":1,"power_watts":{"total":1}}`, `line 1: its time "yesterday" is not RFC 3339`},
		{`{"schema_version":1,"type":"summary"}`, "watch --json lines without a window: nothing to plot"},
	} {
		if _, err := readMacLines(strings.NewReader(tc.input)); err == nil || err.Error() != tc.want {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
}

// Rows that name no command (report's, of a recording) are titled by
// the input's name, once.
func TestRowsWithoutACommandAreTitledByTheInputsName(t *testing.T) {
	rows := []output.SampleRow{{SchemaVersion: 1, Type: "window", EndSeconds: 1, InsideSeconds: 1, PowerWatts: wire.Components{Total: 5}, EnergyJoules: wire.Components{Total: 5}}}
	var samples bytes.Buffer
	if err := output.WriteSamples(&samples, output.SamplesNDJSON, rows); err != nil {
		t.Fatal(err)
	}
	texts := plotted(t, samples.String(), "r.ndjson")
	if !slices.Contains(texts, "exopower plot: r.ndjson") || !slices.Contains(texts, "time from the recording's start (s)") {
		t.Errorf("texts %q: want the title exopower plot: r.ndjson", texts)
	}
}

// dashedPaths are the paths of an SVG drawn dashed in the wall's grey,
// and the points of each.
func dashedPaths(t *testing.T, svg []byte) []int {
	t.Helper()
	paths := regexp.MustCompile(`<path d="([^"]*)"\s+style="([^"]*)"`)
	var out []int
	for _, m := range paths.FindAllStringSubmatch(string(svg), -1) {
		if strings.Contains(m[2], "stroke-dasharray") && strings.Contains(m[2], "stroke:#555555") {
			out = append(out, strings.Count(m[1], "M")+strings.Count(m[1], "L"))
		}
	}
	return out
}

// The rows of run --wall draw the plug's power over each window as a
// dashed line, as watch --wall's lines do, and the title leads with the
// rows' energy at the wall; a window that no reading of the plug held
// is left out of the line, and rows without the wall draw none.
func TestRowsAtTheWallDrawItDashed(t *testing.T) {
	num := func(v float64) *wire.Num { n := wire.Num(v); return &n }
	row := func(from, to, mac float64, w *output.RowWall) output.SampleRow {
		return output.SampleRow{SchemaVersion: 1, Type: "window", StartSeconds: wire.Num(from), EndSeconds: wire.Num(to), InsideSeconds: wire.Num(to - from),
			PowerWatts: wire.Components{Total: wire.Num(mac)}, EnergyJoules: wire.Components{Total: wire.Num(mac * (to - from))}, Command: []string{"make"}, Wall: w}
	}
	rows := []output.SampleRow{
		row(0, 1, 10, &output.RowWall{PowerWatts: num(40), EnergyJoules: num(40)}),
		row(1, 2, 20, &output.RowWall{PowerWatts: num(60), EnergyJoules: num(60)}),
		row(2, 3, 20, &output.RowWall{}), // the plug did not answer
		row(3, 4, 10, &output.RowWall{PowerWatts: num(41), EnergyJoules: num(41)}),
	}
	for _, f := range []output.SamplesFormat{output.SamplesCSV, output.SamplesNDJSON} {
		for _, wall := range []bool{true, false} {
			in := slices.Clone(rows)
			if !wall {
				for i := range in {
					in[i].Wall = nil
				}
			}
			var samples bytes.Buffer
			if err := output.WriteSamples(&samples, f, in); err != nil {
				t.Fatal(err)
			}
			chart, err := Read(&samples, "w."+string(f))
			if err != nil {
				t.Fatal(err)
			}
			var svg bytes.Buffer
			if err := chart(&svg, SVG, DefaultSize); err != nil {
				t.Fatal(err)
			}
			texts, _ := svgOf(t, svg.Bytes())
			dashed := dashedPaths(t, svg.Bytes())
			title := "wall 141 J, 35.25 W on average; 60 J over 4 s, 15 W on average"
			if wall && (!slices.Equal(dashed, []int{6, 2}) || !slices.Contains(texts, "wall") || !slices.Contains(texts, title)) {
				t.Errorf("%s at the wall: dashed paths of %v points (want the three held windows' steps, 6, and the legend's mark, 2), texts %q", f, dashed, texts)
			}
			if !wall && (len(dashed) != 0 || slices.Contains(texts, "wall")) {
				t.Errorf("%s without the wall: dashed paths %v, texts %q", f, dashed, texts)
			}
		}
	}
}
