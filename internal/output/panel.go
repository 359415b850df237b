package output

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/lipgloss"

	"github.com/exopower/exopower/internal/power"
	"github.com/exopower/exopower/internal/sampler"
	"github.com/exopower/exopower/internal/wire"
)

// Escape sequences of the panel. The alternate screen keeps the panel from
// scrolling the terminal and gives the terminal back as it was on the way
// out; the cursor is hidden while the panel is up.
const (
	enterScreen = "\x1b[?1049h\x1b[?25l"
	leaveScreen = "\x1b[?25h\x1b[?1049l"
	home        = "\x1b[H" // the cursor to the top left
	eraseLine   = "\x1b[K" // erase to the end of the line
	eraseBelow  = "\x1b[J" // erase to the end of the screen
)

// historySpan is how far back the panel's sparkline looks.
const historySpan = time.Minute

// panelSink draws the panel on the terminal's alternate screen, anew for
// every window and every change of size.
type panelSink struct {
	t      Terminal
	st     *Styles
	origin time.Time
	source func() wire.Source
	wall   func() *wire.SampleWall
	p      panel
	closed bool
}

func newPanelSink(c SinkConfig) (*panelSink, error) {
	s := &panelSink{t: c.Terminal, st: NewStyles(c.Terminal.Out, c.Terminal.TTY, c.Getenv), origin: c.Origin, source: c.Source, wall: c.Wall}
	if _, err := io.WriteString(s.t.Out, enterScreen); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *panelSink) Window(w sampler.Window, tot sampler.Totals) error {
	if s.closed {
		return nil
	}
	if s.source != nil && s.p.source.Tool == "" {
		// The stream's first document names the machine; it has come by
		// the first window.
		s.p.source = s.source()
	}
	s.p.add(w, tot, s.origin)
	if s.wall != nil {
		s.p.wall = s.wall()
	}
	return s.draw()
}

func (s *panelSink) Resize() error {
	if s.closed {
		return nil
	}
	return s.draw()
}

// Close leaves the alternate screen. Leaving it twice would move the
// cursor back to where it was on the way in, over whatever was printed
// since: it leaves exactly once.
func (s *panelSink) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	_, err := io.WriteString(s.t.Out, leaveScreen)
	return err
}

// draw draws the panel over the last one, at the terminal's size.
func (s *panelSink) draw() error {
	w, h := s.t.size()
	_, err := io.WriteString(s.t.Out, home+clearLines(s.p.render(w, h, s.st))+eraseBelow)
	return err
}

// clearLines ends every line of a drawing with erase-to-end-of-line, so a
// shorter line leaves nothing of the one it replaces.
func clearLines(s string) string {
	out := make([]byte, 0, len(s)+64)
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			out = append(out, eraseLine...)
		}
		out = append(out, s[i])
	}
	return string(append(out, eraseLine...))
}

// panel is the live readout of exopower watch.
type panel struct {
	source  wire.Source
	now     power.Values // the last window's power
	thermal string
	totals  sampler.Totals
	// wall is the plug's live figures (watch --wall); nil without one.
	wall *wire.SampleWall
	// history holds the windows of the last minute, relative to the start
	// of the span, oldest first.
	history []step
}

// step is one window of the history: its power held from one offset to the next.
type step struct {
	from, to time.Duration
	watts    float64
}

// add takes a window and the totals after it.
func (p *panel) add(w sampler.Window, tot sampler.Totals, origin time.Time) {
	p.now, p.thermal, p.totals = w.Power, w.ThermalPressure, tot
	p.history = append(p.history, step{from: w.Start.Sub(origin), to: w.End.Sub(origin), watts: columnsOf(tot.Has)[0].of(w.Power)})
	cut := 0
	for cut < len(p.history) && p.history[cut].to < tot.Elapsed-historySpan {
		cut++
	}
	p.history = p.history[cut:]
}

// panelLine is a line of the panel and its style; nil for none.
type panelLine struct {
	text  string
	style *lipgloss.Style
}

// render draws the panel to fit width x height, without a final newline,
// so that drawing it never scrolls the terminal.
func (p *panel) render(width, height int, st *Styles) string {
	lines := p.lines(width, st)
	if height > 0 && len(lines) > height {
		lines = lines[:height]
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		text := truncate(l.text, width)
		if l.style != nil {
			text = st.Render(*l.style, text)
		}
		out[i] = text
	}
	return strings.Join(out, "\n")
}

// lines are the panel's lines before they are cut to the terminal.
func (p *panel) lines(width int, st *Styles) []panelLine {
	// As many whole columns as fit: a value cut in half misleads.
	columns := columnsOf(p.totals.Has)
	cols := min(len(columns), max(1, (width-8)/11))
	columns = columns[:cols]
	scope := scopeOf(p.totals.Has)
	avg := power.Values{}
	if p.totals.Elapsed > 0 {
		avg = p.totals.Energy.Scale(1 / p.totals.Elapsed.Seconds())
	}
	lo, hi, spark := p.sparkline(width)
	return []panelLine{
		{p.title(), &st.Title},
		{"scope    " + scope, &st.Label},
		{p.wallLine(), &st.Total},
		{header(columns), &st.Label},
		{row("now", p.now, Watts, columns), &st.Total},
		{row("energy", p.totals.Energy, Joules, columns), nil},
		{row("average", avg, Watts, columns), nil},
		{row("peak", p.totals.Peak, Watts, columns), nil},
		{"", nil},
		{fmt.Sprintf("elapsed  %s   samples %d   thermal %s", clock(p.totals.Elapsed), p.totals.Samples, or(p.thermal, "n/a")), nil},
		{sparkLabel(columnsOf(p.totals.Has)[0].name, lo, hi, len(p.history) > 0, width), &st.Label},
		{spark, &st.Total},
		{"Ctrl-C to stop", &st.Label},
	}
}

// wallLine is the plug's line (watch --wall), above the Mac's table as
// the wall leads the summary: its power now, and its energy and average
// since the start; blank without a plug.
func (p *panel) wallLine() string {
	w := p.wall
	if w == nil {
		return ""
	}
	now := "n/a"
	if w.PowerWatts != nil {
		now = Watts(float64(*w.PowerWatts))
	}
	line := fmt.Sprintf("%-8s now %s   energy %s", "wall", now, Joules(float64(w.EnergyJoules)))
	if s := p.totals.Elapsed.Seconds(); s > 0 {
		line += "   average " + Watts(float64(w.EnergyJoules)/s)
	}
	return line
}

func (p *panel) title() string {
	title := "exopower watch"
	if p.source.HWModel != "" {
		title += "  " + p.source.HWModel
	}
	if p.source.OSBuild != "" {
		title += "  macOS build " + p.source.OSBuild
	}
	return title
}

// column is a column of the table: a component's name and its value.
type column struct {
	name string
	of   func(power.Values) float64
}

// columnsOf are the table's columns for the components has: the whole
// system first where it is known, then the SoC's total and parts, then
// the memory.
func columnsOf(has power.Reported) []column {
	var cs []column
	if has.System {
		cs = append(cs, column{"system", func(v power.Values) float64 { return v.System }})
	}
	cs = append(cs, column{"total", func(v power.Values) float64 { return v.Total }},
		column{"CPU", func(v power.Values) float64 { return v.CPU }},
		column{"GPU", func(v power.Values) float64 { return v.GPU }},
		column{"ANE", func(v power.Values) float64 { return v.ANE }})
	if has.DRAM {
		cs = append(cs, column{"DRAM", func(v power.Values) float64 { return v.DRAM }})
	}
	return cs
}

// header names the columns of the table.
func header(columns []column) string {
	line := fmt.Sprintf("%-8s", "")
	for _, c := range columns {
		line += fmt.Sprintf(" %10s", c.name)
	}
	return line
}

// row is a row of the table: its label and the columns' values of v,
// written with f.
func row(label string, v power.Values, f func(float64) string, columns []column) string {
	line := fmt.Sprintf("%-8s", label)
	for _, c := range columns {
		line += fmt.Sprintf(" %10s", f(c.of(v)))
	}
	return line
}

// sparkLabel says what the sparkline of name shows and its scale, its
// lowest bar's power and its highest's; only the scale where the whole
// does not fit in width.
func sparkLabel(name string, lo, hi float64, drawn bool, width int) string {
	if !drawn {
		return name + " power, last minute: no window yet"
	}
	scale := fmt.Sprintf("%c %s to %c %s", levels[0], Watts(lo), levels[len(levels)-1], Watts(hi))
	if label := name + " power, last minute: " + scale; utf8.RuneCountInString(label) <= width {
		return label
	}
	return scale
}

// levels are the sparkline's bars, lowest first.
var levels = []rune("▁▂▃▄▅▆▇█")

// sparkline draws the total power of the last minute, one column per
// slice of time, each at the level of the window that covers its middle;
// blank where no window does (before the start). The scale runs from the
// lowest power shown to the highest, which the panel names: from 0 W, a
// Mac at 15 to 18 W would show a row of bars all but full. Power that
// stayed level is drawn at mid height.
func (p *panel) sparkline(width int) (lo, hi float64, line string) {
	cols := max(width, 10)
	if len(p.history) == 0 {
		return 0, 0, strings.Repeat(" ", cols)
	}
	lo, hi = p.history[0].watts, p.history[0].watts
	for _, s := range p.history {
		hi, lo = max(hi, s.watts), min(lo, s.watts)
	}
	var b strings.Builder
	end := p.totals.Elapsed
	j := 0
	for c := 0; c < cols; c++ {
		mid := end - historySpan + time.Duration((float64(c)+0.5)/float64(cols)*float64(historySpan))
		for j < len(p.history) && p.history[j].to <= mid {
			j++
		}
		if j == len(p.history) || p.history[j].from > mid {
			b.WriteByte(' ')
			continue
		}
		k := (len(levels) - 1) / 2
		if hi > lo {
			k = int(math.Round((p.history[j].watts - lo) / (hi - lo) * float64(len(levels)-1)))
		}
		b.WriteRune(levels[min(max(k, 0), len(levels)-1)])
	}
	return lo, hi, b.String()
}

// clock writes a duration as h:mm:ss.
func clock(d time.Duration) string {
	s := int(d.Round(time.Second).Seconds())
	return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
}

// truncate cuts a line of single-width characters to width columns.
func truncate(s string, width int) string {
	if width <= 0 || utf8.RuneCountInString(s) <= width {
		return s
	}
	r := []rune(s)
	return string(r[:width-1]) + "…"
}
