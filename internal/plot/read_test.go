package plot

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/exopower/exopower/internal/output"
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

// A picture names what was measured (the command, the commands, the nodes), the
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
