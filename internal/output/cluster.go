package output

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"github.com/exopower/exopower/internal/power"
	"github.com/exopower/exopower/internal/wire"
)

// ClusterSink shows the windows of several Macs as they come, each node's
// and their total.
type ClusterSink interface {
	// Window shows a window of node i (its SampleLine, energy cumulative
	// from the start) and the total after it.
	Window(i int, l wire.SampleLine) error
	// Note shows what became of node i's stream (its window stop
	// coming: "stream lost"; "" when all is well again), where the view
	// has a place for it: the panel's row. The other views leave it to
	// the warnings on stderr, which they do not draw over.
	Note(i int, state string) error
	Resize() error
	Close() error
}

// NodeName is how a node of a watch over several Macs is named: by its
// own name, and by a label that tells it from the others, which is what
// the views show.
type NodeName struct{ Name, Label string }

// cluster is what every cluster sink keeps: each node's newest line, and
// the total after it.
type cluster struct {
	nodes []NodeName
	last  []wire.SampleLine
	seen  []bool
	state []string
	total wire.SampleLine
}

// add takes node i's line and returns the total after it: the power of
// each node's newest window summed, and their energies summed.
func (c *cluster) add(i int, l wire.SampleLine) wire.SampleLine {
	c.last[i], c.seen[i] = l, true
	var watts, joules power.Values
	var has power.Reported
	for k := range c.last {
		if c.seen[k] {
			watts, joules = watts.Add(c.last[k].PowerWatts.Values()), joules.Add(c.last[k].EnergyJoules.Values())
			has = has.Or(c.last[k].PowerWatts.Has())
		}
	}
	c.total = wire.SampleLine{SchemaVersion: wire.SchemaVersion, Type: "total", Time: l.Time,
		PowerWatts: wire.NewComponents(watts, has), EnergyJoules: wire.NewComponents(joules, has)}
	return c.total
}

// NewClusterSink returns the sink for c.Format over the named nodes.
func NewClusterSink(c SinkConfig, nodes []NodeName) (ClusterSink, error) {
	base := cluster{nodes: nodes, last: make([]wire.SampleLine, len(nodes)), seen: make([]bool, len(nodes)), state: make([]string, len(nodes))}
	switch c.Format {
	case NDJSON:
		return &clusterNDJSON{cluster: base, out: c.Terminal.Out}, nil
	case Lines:
		return &clusterLines{cluster: base, out: c.Terminal.Out}, nil
	case Panel:
		p := &clusterPanel{cluster: base, t: c.Terminal, st: NewStyles(c.Terminal.Out, c.Terminal.TTY, c.Getenv)}
		if _, err := io.WriteString(p.t.Out, enterScreen); err != nil {
			return nil, err
		}
		return p, nil
	}
	return nil, fmt.Errorf("no sink for %v", c.Format)
}

// clusterNDJSON writes each node's line, named, and a total line after it.
type clusterNDJSON struct {
	cluster
	out io.Writer
}

func (s *clusterNDJSON) Window(i int, l wire.SampleLine) error {
	l.Node, l.Label = s.nodes[i].Name, s.nodes[i].Label
	tot := s.add(i, l)
	if err := WriteJSON(s.out, l); err != nil {
		return err
	}
	return WriteJSON(s.out, tot)
}

func (s *clusterNDJSON) Note(int, string) error { return nil }
func (s *clusterNDJSON) Resize() error          { return nil }
func (s *clusterNDJSON) Close() error           { return nil }

// clusterLines writes a line per node's window and the total after it.
type clusterLines struct {
	cluster
	out io.Writer
}

func (s *clusterLines) Window(i int, l wire.SampleLine) error {
	tot := s.add(i, l)
	at := l.Time
	if t, err := time.Parse(time.RFC3339Nano, l.Time); err == nil {
		at = t.Local().Format("15:04:05.000")
	}
	_, err := fmt.Fprintf(s.out, "%s  %-*s %10s  energy %10s    all %10s  energy %10s\n", at, s.width(16), s.nodes[i].Label,
		Watts(float64(l.PowerWatts.Total)), Joules(float64(l.EnergyJoules.Total)),
		Watts(float64(tot.PowerWatts.Total)), Joules(float64(tot.EnergyJoules.Total)))
	return err
}

func (s *clusterLines) Note(int, string) error { return nil }
func (s *clusterLines) Resize() error          { return nil }
func (s *clusterLines) Close() error           { return nil }

// clusterPanel redraws a row per node and the total, in place.
type clusterPanel struct {
	cluster
	t      Terminal
	st     *Styles
	closed bool
}

func (s *clusterPanel) Window(i int, l wire.SampleLine) error {
	if s.closed {
		return nil
	}
	s.add(i, l)
	return s.draw()
}

func (s *clusterPanel) Note(i int, state string) error {
	if s.closed {
		return nil
	}
	s.state[i] = state
	return s.draw()
}

func (s *clusterPanel) Resize() error {
	if s.closed {
		return nil
	}
	return s.draw()
}

func (s *clusterPanel) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	_, err := io.WriteString(s.t.Out, leaveScreen)
	return err
}

// panelNumbers is how many columns a row of the panel takes besides the
// node's label: its indent, and the numbers after the label.
const panelNumbers = 2 + 1 + 4*11 + 11

// width is how wide the column of the nodes' labels is: the longest
// label, at least least.
func (c *cluster) width(least int) int {
	w := least
	for _, n := range c.nodes {
		w = max(w, utf8.RuneCountInString(n.Label))
	}
	return w
}

func (s *clusterPanel) draw() error {
	w, h := s.t.size()
	// The labels whole where the terminal leaves them room beside the
	// numbers, which are never cut: a label cut at its end could lose
	// what tells two nodes apart, its address, so it is cut in its
	// middle.
	nw := min(s.width(20), max(20, w-panelNumbers))
	label := func(l string) string { return s.st.Render(s.st.Label, fmt.Sprintf("%-*s", nw, cutMiddle(l, nw))) }
	var b strings.Builder
	fmt.Fprintln(&b, s.st.Render(s.st.Title, fmt.Sprintf("exopower watch: %d nodes   (Ctrl-C ends it with a summary)", len(s.nodes))))
	fmt.Fprintf(&b, "\n  %-*s %10s %10s %10s %10s %11s\n", nw, "node", "power", "CPU", "GPU", "ANE", "energy")
	for i, n := range s.nodes {
		switch {
		case !s.seen[i] && s.state[i] != "":
			fmt.Fprintf(&b, "  %s  %s\n", label(n.Label), s.st.Render(s.st.Warn, s.state[i]))
		case !s.seen[i]:
			fmt.Fprintf(&b, "  %s %12s\n", label(n.Label), "waiting")
		default:
			s.row(&b, label(n.Label), nw, s.last[i], s.state[i])
		}
	}
	s.row(&b, label("total"), nw, s.total, "")
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if h > 0 && len(lines) > h {
		lines = lines[:h]
	}
	for k := range lines {
		// Cut by what shows, not by bytes: colours are escape codes.
		lines[k] = ansi.Truncate(lines[k], w, "")
	}
	_, err := io.WriteString(s.t.Out, home+clearLines(strings.Join(lines, "\n")+"\n")+eraseBelow)
	return err
}

// row draws a node's newest window after its label, drawn nw wide, and
// under it state, what became of its stream, when there is one to say.
func (s *clusterPanel) row(b *strings.Builder, label string, nw int, l wire.SampleLine, state string) {
	p := l.PowerWatts
	fmt.Fprintf(b, "  %s %10s %10s %10s %10s %11s", label,
		Watts(float64(p.Total)), Watts(float64(p.CPU)), Watts(float64(p.GPU)), Watts(float64(p.ANE)), Joules(float64(l.EnergyJoules.Total)))
	b.WriteString("\n")
	// On a line of its own: the row fills 80 columns.
	if state != "" {
		fmt.Fprintf(b, "  %-*s %s\n", nw, "", s.st.Render(s.st.Warn, state))
	}
}

// cutMiddle cuts s to width columns, if it is wider, in its middle,
// keeping its start and its end.
func cutMiddle(s string, width int) string {
	r := []rune(s)
	if len(r) <= width || width < 3 {
		return s
	}
	head := (width - 1) / 2
	return string(r[:head]) + "…" + string(r[len(r)-(width-1-head):])
}
