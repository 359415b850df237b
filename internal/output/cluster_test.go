package output

import (
	"bytes"
	"strings"
	"testing"

	"github.com/exopower/exopower/internal/wire"
)

func line(node string, watts, joules float64) wire.SampleLine {
	return wire.SampleLine{Type: "sample", Time: "2026-12-03T10:00:00Z", Node: node,
		PowerWatts: wire.Components{Total: wire.Num(watts), CPU: wire.Num(watts)}, EnergyJoules: wire.Components{Total: wire.Num(joules), CPU: wire.Num(joules)}}
}

// The panel over several Macs: a row per node (waiting until its first
// window), and a total row that sums each node's newest window.
func TestClusterPanelDrawsARowPerNodeAndTheTotal(t *testing.T) {
	var out bytes.Buffer
	s, err := NewClusterSink(SinkConfig{Format: Panel, Terminal: Terminal{Out: &out, TTY: true}}, named("mac1", "mac2"))
	if err != nil {
		t.Fatal(err)
	}
	s.Window(0, line("", 10, 1))
	first := out.String()
	if !strings.Contains(first, enterScreen) || !strings.Contains(first, "mac2") || !strings.Contains(first, "waiting") {
		t.Errorf("first frame %q: want the screen entered and mac2 waiting", first)
	}
	out.Reset()
	s.Window(1, line("", 20, 4))
	s.Window(0, line("", 12, 2))
	frame := out.String()[strings.LastIndex(out.String(), home):]
	for _, want := range []string{"mac1", "12.00 W", "mac2", "20.00 W", "total", "32.00 W", "6.000 J"} {
		if !strings.Contains(frame, want) {
			t.Errorf("frame %q: no %q", frame, want)
		}
	}
	s.Close()
	if !strings.HasSuffix(out.String(), leaveScreen) || s.Close() != nil {
		t.Errorf("close: %q", out.String())
	}
}

func TestClusterNDJSONNamesTheNodeAndAddsATotalLine(t *testing.T) {
	var out bytes.Buffer
	s, _ := NewClusterSink(SinkConfig{Format: NDJSON, Terminal: Terminal{Out: &out}}, named("mac1", "mac2"))
	s.Window(0, line("", 10, 1))
	s.Window(1, line("", 20, 4))
	ls := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(ls) != 4 || !strings.Contains(ls[0], `"node":"mac1"`) || !strings.Contains(ls[2], `"node":"mac2"`) ||
		!strings.Contains(ls[3], `"type":"total"`) || !strings.Contains(ls[3], `"power_watts":{"total":30`) || !strings.Contains(ls[3], `"energy_joules":{"total":5`) {
		t.Errorf("lines:\n%s", out.String())
	}
}

// A node whose stream broke shows so in its row of the panel, after its
// last window (or in place of "waiting"), until it is back.
func TestClusterPanelShowsWhatBecameOfANodesStream(t *testing.T) {
	var out bytes.Buffer
	s, _ := NewClusterSink(SinkConfig{Format: Panel, Terminal: Terminal{Out: &out, TTY: true}}, named("mac1", "mac2"))
	s.Window(0, line("", 10, 1))
	s.Note(0, "stream broke: reconnecting")
	s.Note(1, "stream lost")
	frame := out.String()[strings.LastIndex(out.String(), home):]
	for _, want := range []string{"10.00 W", "stream broke: reconnecting", "mac2", "stream lost"} {
		if !strings.Contains(frame, want) {
			t.Errorf("frame %q: no %q", frame, want)
		}
	}
	if strings.Contains(frame, "waiting") {
		t.Errorf("frame %q: mac2's stream is lost, not waited for", frame)
	}
	s.Note(0, "")
	if frame := out.String()[strings.LastIndex(out.String(), home):]; strings.Contains(frame, "reconnecting") {
		t.Errorf("frame %q: mac1's stream is back", frame)
	}
	var nd bytes.Buffer
	j, _ := NewClusterSink(SinkConfig{Format: NDJSON, Terminal: Terminal{Out: &nd}}, named("mac1"))
	if j.Note(0, "stream lost") != nil || nd.Len() != 0 {
		t.Errorf("NDJSON wrote %q for a note: its notes go to stderr, not among the data", nd.String())
	}
}
