package plot

import (
	"fmt"
	"strings"
	"testing"
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
