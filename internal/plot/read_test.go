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
	n, err := readNodeLines(strings.NewReader(lines.String()), "t")
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
