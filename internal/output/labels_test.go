package output

import (
	"bytes"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// named are nodes whose labels are their names.
func named(names ...string) []NodeName {
	out := make([]NodeName, len(names))
	for i, n := range names {
		out[i] = NodeName{Name: n, Label: n}
	}
	return out
}

// alike are two Macs of one name, labelled apart by their addresses.
var alike = []NodeName{{"mac1", "mac1 (127.0.0.1:10241)"}, {"mac1", "mac1 (127.0.0.1:10242)"}}

// The panel shows each node's label whole where the terminal has room,
// the numbers whole beside it, and on a narrow terminal cuts a label in
// its middle, so that the addresses at their ends still tell two nodes
// apart.
func TestTheClusterPanelShowsNodesNamedAlikeApart(t *testing.T) {
	for _, tt := range []struct {
		name  string
		width int
		nodes []NodeName
		want  []string
	}{
		{"80 columns", 80, alike, []string{"mac1 (127.0.0.1:10241)", "mac1 (127.0.0.1:10242)"}},
		{"120 columns", 120, []NodeName{{"mac1", "mac1.local (192.168.100.200:10241)"}, {"mac1", "mac1 (192.168.100.201:10241)"}},
			[]string{"mac1.local (192.168.100.200:10241)", "mac1 (192.168.100.201:10241)"}},
		{"80 columns, longer labels", 80, []NodeName{{"mac1", "mac1.local (192.168.100.200:10241)"}, {"mac1", "mac1 (192.168.100.201:10241)"}},
			[]string{"mac1.local….200:10241)", "mac1 (192.….201:10241)"}},
	} {
		var out bytes.Buffer
		size := func() (int, int, error) { return tt.width, 24, nil }
		s, err := NewClusterSink(SinkConfig{Format: Panel, Terminal: Terminal{Out: &out, TTY: true, Size: size}}, tt.nodes)
		if err != nil {
			t.Fatal(err)
		}
		s.Window(0, line("", 10, 1))
		s.Window(1, line("", 20, 4))
		frame := out.String()[strings.LastIndex(out.String(), home):]
		for i, want := range tt.want {
			if !strings.Contains(frame, want) {
				t.Errorf("%s: frame\n%s\nno %q", tt.name, frame, want)
			}
			if energy := []string{"1.000 J", "4.000 J"}[i]; !strings.Contains(frame, energy) {
				t.Errorf("%s: frame\n%s\nno %s: the numbers are cut", tt.name, frame, energy)
			}
		}
		for l := range strings.Lines(frame) {
			if w := ansi.StringWidth(strings.ReplaceAll(l, eraseLine, "")); w > tt.width {
				t.Errorf("%s: a line %d wide: %q", tt.name, w, l)
			}
		}
		s.Close()
	}
}

// The lines and the JSON name each node by its label; the JSON keeps its
// own name in node.
func TestTheClusterLinesAndJSONShowNodesNamedAlikeApart(t *testing.T) {
	var lines bytes.Buffer
	s, _ := NewClusterSink(SinkConfig{Format: Lines, Terminal: Terminal{Out: &lines}}, alike)
	s.Window(0, line("", 10, 1))
	s.Window(1, line("", 20, 4))
	ls := strings.Split(strings.TrimSpace(lines.String()), "\n")
	if len(ls) != 2 || !strings.Contains(ls[0], "mac1 (127.0.0.1:10241) ") || !strings.Contains(ls[1], "mac1 (127.0.0.1:10242) ") {
		t.Errorf("lines:\n%s", lines.String())
	}
	var nd bytes.Buffer
	j, _ := NewClusterSink(SinkConfig{Format: NDJSON, Terminal: Terminal{Out: &nd}}, alike)
	j.Window(0, line("", 10, 1))
	j.Window(1, line("", 20, 4))
	ls = strings.Split(strings.TrimSpace(nd.String()), "\n")
	if len(ls) != 4 || !strings.Contains(ls[0], `"node":"mac1","label":"mac1 (127.0.0.1:10241)"`) || !strings.Contains(ls[2], `"node":"mac1","label":"mac1 (127.0.0.1:10242)"`) {
		t.Errorf("NDJSON:\n%s", nd.String())
	}
}
