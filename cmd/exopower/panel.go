package main

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/lipgloss"

	"github.com/exopower/exopower/internal/powermetrics"
	"github.com/exopower/exopower/internal/sampler"
)

// historySpan is how far back the panel's sparkline looks.
const historySpan = time.Minute

// panel is the live readout of exopower watch.
type panel struct {
	source  Source
	now     powermetrics.Values // the last window's power
	thermal string
	totals  sampler.Totals
	// history holds the windows of the last minute, relative to the start
	// of the span, oldest first.
	history []span
}

type span struct {
	from, to time.Duration
	watts    float64
}

// add takes a window and the totals after it.
func (p *panel) add(w sampler.Window, tot sampler.Totals, origin time.Time) {
	p.now, p.thermal, p.totals = w.Power, w.ThermalPressure, tot
	p.history = append(p.history, span{from: w.Start.Sub(origin), to: w.End.Sub(origin), watts: w.Power.Total})
	cut := 0
	for cut < len(p.history) && p.history[cut].to < tot.Elapsed-historySpan {
		cut++
	}
	p.history = p.history[cut:]
}

// render draws the panel to fit width x height, without a final newline,
// so that drawing it never scrolls the terminal.
func (p *panel) render(width, height int, st *styles) string {
	avg := powermetrics.Values{}
	if p.totals.Elapsed > 0 {
		avg = p.totals.Energy.Scale(1 / p.totals.Elapsed.Seconds())
	}
	title := "exopower watch"
	if p.source.HWModel != "" {
		title += "  " + p.source.HWModel
	}
	if p.source.OSBuild != "" {
		title += "  macOS build " + p.source.OSBuild
	}
	// As many whole columns as fit: a value cut in half misleads.
	cols := min(4, max(1, (width-8)/11))
	row := func(label string, v powermetrics.Values, f func(float64) string) string {
		line := fmt.Sprintf("%-8s", label)
		for _, x := range []float64{v.Total, v.CPU, v.GPU, v.ANE}[:cols] {
			line += fmt.Sprintf(" %10s", f(x))
		}
		return line
	}
	header := fmt.Sprintf("%-8s", "")
	for _, h := range []string{"total", "CPU", "GPU", "ANE"}[:cols] {
		header += fmt.Sprintf(" %10s", h)
	}
	thermal := p.thermal
	if thermal == "" {
		thermal = "n/a"
	}
	lo, hi, spark := p.sparkline(width)
	type line struct {
		text  string
		style *lipgloss.Style
	}
	lines := []line{
		{title, &st.title},
		{"scope    " + scopeText, &st.label},
		{"", nil},
		{header, &st.label},
		{row("now", p.now, watts), &st.total},
		{row("energy", p.totals.Energy, joules), nil},
		{row("average", avg, watts), nil},
		{row("peak", p.totals.Peak, watts), nil},
		{"", nil},
		{fmt.Sprintf("elapsed  %s   samples %d   thermal %s", clock(p.totals.Elapsed), p.totals.Samples, thermal), nil},
		{fmt.Sprintf("total power, last minute: %s to %s (bars from 0 W)", watts(lo), watts(hi)), &st.label},
		{spark, &st.total},
		{"Ctrl-C to stop", &st.label},
	}
	if height > 0 && len(lines) > height {
		lines = lines[:height]
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		text := truncate(l.text, width)
		if l.style != nil {
			text = st.render(*l.style, text)
		}
		out[i] = text
	}
	return strings.Join(out, "\n")
}

// sparkline draws the total power of the last minute, one column per
// slice of time, each at the level of the window that covers its middle;
// blank where no window does (before the start). The scale runs from 0 to
// the highest power shown.
func (p *panel) sparkline(width int) (lo, hi float64, line string) {
	cols := max(width, 10)
	if len(p.history) == 0 {
		return 0, 0, strings.Repeat(" ", cols)
	}
	lo = p.history[0].watts
	for _, s := range p.history {
		hi, lo = max(hi, s.watts), min(lo, s.watts)
	}
	levels := []rune("▁▂▃▄▅▆▇█")
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
		k := 0
		if hi > 0 {
			k = int(p.history[j].watts / hi * float64(len(levels)-1))
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
