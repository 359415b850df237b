package plot

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// Two Macs of one name, as watch --node --json writes them (node the
// name each gives, label apart), the second's clock half a second ahead:
// a line each, of its own windows, on this Mac's clock by its own offset,
// and a total of both, never one line through both nodes' windows.
func TestTwoNodesOfOneNameAreTwoLines(t *testing.T) {
	labels := []string{"mac1 (10.0.0.5:10241)", "mac1 (10.0.0.6:10241)"}
	watts := []float64{10, 20}
	offsets := []float64{0, 0.5}
	t0 := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	var lines strings.Builder
	for k := 1; k <= 4; k++ {
		for i, label := range labels {
			at := t0.Add(time.Duration((offsets[i] + 0.125*float64(k)) * float64(time.Second)))
			fmt.Fprintf(&lines, `{"schema_version":1,"type":"sample","time":%q,"window_seconds":0.125,"power_watts":{"total":%v},"node":"mac1","label":%q}`+"\n",
				at.Format(time.RFC3339Nano), watts[i], label)
			fmt.Fprintf(&lines, `{"schema_version":1,"type":"total","time":%q,"window_seconds":0,"power_watts":{"total":30}}`+"\n", at.Format(time.RFC3339Nano))
		}
	}
	fmt.Fprintf(&lines, `{"schema_version":1,"type":"summary","duration_seconds":0.5,"energy_joules":{"total":15},"avg_power_watts":{"total":30},"nodes":[`+
		`{"node":"mac1","label":%q,"clock_offset_seconds":0},{"node":"mac1","label":%q,"clock_offset_seconds":0.5}]}`+"\n", labels[0], labels[1])
	n, err := readNodeLines(strings.NewReader(lines.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(n.Series) != 2 {
		t.Fatalf("%d series, want one for each node: %+v", len(n.Series), n.Series)
	}
	for i, s := range n.Series {
		if s.Name != labels[i] || len(s.Windows) != 4 {
			t.Errorf("series %d: %q with %d windows, want %q with its 4", i, s.Name, len(s.Windows), labels[i])
			continue
		}
		for k, w := range s.Windows {
			if w.Watts != watts[i] || w.Start != 0.125*float64(k) || w.End != 0.125*float64(k+1) {
				t.Errorf("%s: window %d %+v, want %v W over [%v, %v] s", s.Name, k, w, watts[i], 0.125*float64(k), 0.125*float64(k+1))
			}
		}
	}
	if total := Total(n.Series); len(total) != 1 || total[0] != (Step{Start: 0, End: 0.5, Watts: 30}) {
		t.Errorf("total %+v, want 30 W over [0, 0.5] s", total)
	}
}
