package output

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/lipgloss"

	"github.com/exopower/exopower/internal/apps"
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
	// The apps' view (screen.go), a key away from the rails where
	// apps are read; showApps says it is the one shown.
	apps     AppsView
	snap     *apps.Snapshot // the refresh shown
	latest   *apps.Snapshot // the newest, shown again once not paused
	showApps bool
	noApps   string
}

func newPanelSink(c SinkConfig) (*panelSink, error) {
	s := &panelSink{t: c.Terminal, st: NewStyles(c.Terminal.Out, c.Terminal.TTY, c.Getenv), origin: c.Origin, source: c.Source, wall: c.Wall,
		showApps: c.Apps == StartOnApps, noApps: c.NoApps}
	s.p.keys, s.apps.NoKeys = c.Keys, !c.Keys
	if _, err := io.WriteString(s.t.Out, enterScreen); err != nil {
		return nil, err
	}
	// Drawn at once, before the first window (which may be an interval
	// away): a blank screen says nothing, not even how to leave it.
	return s, s.draw()
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
	if s.wall != nil {
		s.p.wall = s.wall()
	}
	s.p.add(w, tot, s.origin)
	if s.showApps {
		return nil
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

// draw draws the view shown over the last drawing, at the terminal's
// size.
func (s *panelSink) draw() error {
	w, h := s.t.size()
	var screen string
	if s.showApps {
		screen = s.renderApps(w, h)
	} else {
		screen = s.p.render(w, h, s.st)
	}
	_, err := io.WriteString(s.t.Out, home+clearLines(screen)+eraseBelow)
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

// panel is the live readout of exopower watch: a chart per rail.
type panel struct {
	source  wire.Source
	now     power.Values // the last window's power
	thermal string
	totals  sampler.Totals
	// wall is the plug's live figures (watch --wall); nil without one.
	// wallPeak is the highest power it has read.
	wall     *wire.SampleWall
	wallPeak float64
	// history holds the windows of the last historySpan, relative to
	// the start of the span, oldest first.
	history []step
	// keys says the keys are read: q ends, tab goes to the apps.
	keys bool
}

// add takes a window and the totals after it, and the plug's figures
// after it (nil without a plug).
func (p *panel) add(w sampler.Window, tot sampler.Totals, origin time.Time) {
	p.now, p.thermal, p.totals = w.Power, w.ThermalPressure, tot
	s := step{from: w.Start.Sub(origin), to: w.End.Sub(origin), v: w.Power}
	if p.wall != nil && p.wall.PowerWatts != nil {
		s.wall, s.hasWall = float64(*p.wall.PowerWatts), true
		p.wallPeak = max(p.wallPeak, s.wall)
	}
	p.history = append(p.history, s)
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
	lines := p.lines(width, height, st)
	if height > 0 && len(lines) > height {
		// The keys' line stays, on the last row.
		lines = append(lines[:height-1], lines[len(lines)-1])
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

// lines are the panel's lines before they are cut to the terminal: the
// rails, each its figures beside a chart of its last minutes, between
// the title and scope and the time and keys.
func (p *panel) lines(width, height int, st *Styles) []panelLine {
	rails := p.rails()
	l := layoutRails(width, height, len(rails))
	head := fmt.Sprintf("%-*s", nameWidth, "")
	for _, s := range railStats[:l.stats] {
		head += fmt.Sprintf(" %10s", s)
	}
	if l.chartWidth > 0 {
		head += " " + chartTitle(l.chartWidth)
	}
	lines := []panelLine{
		{p.title(), &st.Title},
		{"scope    " + scopeOf(p.totals.Has), &st.Label},
		{head, &st.Label},
	}
	for i := range rails {
		r := &rails[i]
		if l.chartWidth > 0 {
			p.chart(r, l.chartWidth, l.rows)
		}
		style := (*lipgloss.Style)(nil)
		if i == 0 {
			// The first rail, the wall or the whole Mac, is the
			// figure that matters most.
			style = &st.Total
		}
		for _, text := range railLines(r, l) {
			lines = append(lines, panelLine{text, style})
		}
	}
	return append(lines,
		panelLine{fmt.Sprintf("elapsed  %s   samples %d   thermal %s", clock(p.totals.Elapsed), p.totals.Samples, or(p.thermal, "n/a")), nil},
		panelLine{p.footer(), &st.Label})
}

// footer says how to stop, and where the keys are read how to go to
// the apps.
func (p *panel) footer() string {
	if p.keys {
		return "q quit  tab apps"
	}
	return "Ctrl-C to stop"
}

// chartTitle says what the charts show, as much as fits their width.
func chartTitle(width int) string {
	for _, t := range []string{"power, last 2 minutes, log scale", "last 2 min, log scale", "last 2 min"} {
		if len(t) <= width {
			return t
		}
	}
	return ""
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

// levels are a chart's bars, lowest first.
var levels = []rune("▁▂▃▄▅▆▇█")

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
