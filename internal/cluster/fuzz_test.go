package cluster

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/wire"
)

// FuzzANodesAnswer feeds the checks of a node's answers any bytes, as the
// answer to its status, to the end of its span and as a line of its
// stream. Whatever passes sums, over two nodes, to a total that every
// output can write (finite, JSON), and holds no control character in
// any string. Its seeds are in testdata/fuzz/FuzzANodesAnswer, which a
// plain go test replays.
func FuzzANodesAnswer(f *testing.F) {
	b, _ := json.Marshal(goodReading(time.Now().Add(-time.Second), time.Second, true))
	f.Add(b)
	l, _ := json.Marshal(goodLine(time.Now(), 3))
	f.Add(l)
	f.Add([]byte(`{"node":"mac2","interval_seconds":0.1}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var st wire.Status
		if json.Unmarshal(body, &st) == nil && checkStatus(&st) == nil {
			noControl(t, "the status's name", st.Node)
			if s := float64(st.IntervalSeconds); !(s >= 0.01 && s <= 3600) || Wait(time.Duration(s*float64(time.Second))) > MaxWindowWait+EndSlack {
				t.Errorf("interval %v passed", s)
			}
		}
		var rd wire.Reading
		if json.Unmarshal(body, &rd) == nil && checkReading(&rd, true) == nil {
			ns := wire.NodeSummary{Summary: rd.Summary, Node: "n", URL: "u"}
			sum := Total([]wire.NodeSummary{ns, ns}, nil, time.Unix(0, 0), time.Second)
			if _, err := json.Marshal(sum); err != nil {
				t.Errorf("the total of %s cannot be written: %v", body, err)
			}
			for _, v := range sum.EnergyJoules.Values().Array() {
				if math.IsInf(v, 0) || math.IsNaN(v) || v < 0 {
					t.Errorf("energy %v J passed", v)
				}
			}
			for _, s := range append([]string{rd.ID, rd.Node, rd.Type, rd.Scope, rd.Source.Tool, rd.Source.HWModel, rd.Source.OSBuild}, rd.Warnings...) {
				noControl(t, "a reading's text", s)
			}
			if rd.Nodes != nil || rd.UncertaintyJoules != nil || rd.Command != nil {
				t.Errorf("a span's reading kept fields of a cluster's: %s", body)
			}
		}
		var line wire.SampleLine
		if json.Unmarshal(body, &line) == nil && checkLine(&line, time.Second) == nil {
			if _, err := json.Marshal(line); err != nil {
				t.Errorf("the line %s cannot be written: %v", body, err)
			}
			noControl(t, "a line's text", line.ThermalPressure+line.Node+line.Type)
		}
	})
}
