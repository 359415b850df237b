package output

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/exopower/exopower/internal/power"
)

// historySpan is how far back the panel's charts look.
const historySpan = 2 * time.Minute

// step is one window of the history: its power held from one offset to
// the next, and the plug's power at its end where a plug is read.
type step struct {
	from, to time.Duration
	v        power.Values
	wall     float64
	hasWall  bool
}

// rail is one component's row of the panel: its figures and how to read
// its power from a step of the history.
type rail struct {
	name string
	// now is "" where the power now is not known (a plug's reading
	// gone stale).
	now               string
	energy, avg, peak float64
	of                func(step) (float64, bool)
	chartLo, chartHi  float64
	chartRows         []string
	chartOK           bool
}

// railStats are the figures beside each chart, in the order they are
// given up when the terminal is narrow: the power now stays.
var railStats = []string{"now", "energy", "average", "peak"}

func (r *rail) stat(i int) string {
	switch i {
	case 0:
		return or(r.now, "n/a")
	case 1:
		return Joules(r.energy)
	case 2:
		return Watts(r.avg)
	}
	return Watts(r.peak)
}

// rails are the panel's rows: the wall's first where a plug is read, as
// the wall leads the summary, then the table's columns.
func (p *panel) rails() []rail {
	secs := p.totals.Elapsed.Seconds()
	avg := func(j float64) float64 {
		if secs <= 0 {
			return 0
		}
		return j / secs
	}
	var rs []rail
	if w := p.wall; w != nil {
		r := rail{name: "wall", energy: float64(w.EnergyJoules), avg: avg(float64(w.EnergyJoules)), peak: p.wallPeak,
			of: func(s step) (float64, bool) { return s.wall, s.hasWall }}
		if w.PowerWatts != nil {
			r.now = Watts(float64(*w.PowerWatts))
		}
		rs = append(rs, r)
	}
	for _, c := range columnsOf(p.totals.Has) {
		of := c.of
		rs = append(rs, rail{name: c.name, now: Watts(of(p.now)), energy: of(p.totals.Energy), avg: avg(of(p.totals.Energy)),
			peak: of(p.totals.Peak), of: func(s step) (float64, bool) { return of(s.v), true }})
	}
	return rs
}

// railLayout is how the rails fit the terminal: how many figures beside
// each chart, how wide the charts are and how many rows each has.
type railLayout struct {
	stats, chartWidth, rows int
}

// Widths of the panel's parts: a rail's name, a figure, and the scale
// beside a chart.
const (
	nameWidth  = 8
	statWidth  = 11 // " %10s"
	scaleWidth = 10 // " %9s"
	// minChart is the narrowest chart worth drawing; the figures are
	// given up before the chart is narrower.
	minChart = 20
	// panelChrome is the panel's lines that are not rails: the title,
	// the scope, the figures' heads, the time and the keys.
	panelChrome = 5
	maxRows     = 4
)

func layoutRails(width, height, n int) railLayout {
	l := railLayout{stats: len(railStats)}
	for l.stats > 1 && width-nameWidth-l.stats*statWidth-1-scaleWidth < minChart {
		l.stats--
	}
	l.chartWidth = max(width-nameWidth-l.stats*statWidth-1-scaleWidth, 0)
	l.rows = 1
	if n > 0 {
		l.rows = min(max((height-panelChrome)/n, 1), maxRows)
	}
	return l
}

// chart draws r's power over the last historySpan, cols columns wide and
// rows high, each column the time-weighted average of the windows it
// covers (a window's energy is held over it, as the ledger holds it);
// blank where no window does. The scale is logarithmic, from the lowest
// power drawn to the highest, so that an idle Mac's watts and a spike's
// tens both read: on a linear scale from a spike down, idle is one flat
// row. It floors at a thousandth of the highest (and 1 mW), where a rail
// that idles at zero would otherwise stretch the scale without end
// (logScale).
func (p *panel) chart(r *rail, cols, rows int) {
	vals, known := p.columns(r, cols)
	lo, hi, any := math.Inf(1), 0.0, false
	for i, v := range vals {
		if known[i] {
			lo, hi, any = min(lo, v), max(hi, v), true
		}
	}
	r.chartOK = any
	if !any {
		r.chartRows = blankRows(cols, rows)
		return
	}
	// Power that stayed within the narrowest scale is drawn at mid
	// height, a flat line: on that scale's edge between two levels, a
	// few parts in a million of noise would flip it between them.
	flat := hi < lo*minRatio
	lo, hi = logScale(lo, hi)
	r.chartLo, r.chartHi = lo, hi
	levelsOf := func(v float64) int {
		top := rows * len(levels)
		switch {
		case hi <= 0:
			return 1
		case flat:
			return (top + 1) / 2
		case v <= lo:
			return 1
		case v >= hi:
			return top
		}
		return 1 + int(math.Round((math.Log(v)-math.Log(lo))/(math.Log(hi)-math.Log(lo))*float64(top-1)))
	}
	r.chartRows = make([]string, rows)
	for row := range rows {
		var b strings.Builder
		floor := (rows - 1 - row) * len(levels)
		for i, v := range vals {
			k := levelsOf(v) - floor
			switch {
			case !known[i] || k <= 0:
				b.WriteByte(' ')
			case k >= len(levels):
				b.WriteRune(levels[len(levels)-1])
			default:
				b.WriteRune(levels[k-1])
			}
		}
		r.chartRows[row] = b.String()
	}
}

// columns are r's power in each of cols slices of the last historySpan,
// each the average over the part of it the history covers.
func (p *panel) columns(r *rail, cols int) ([]float64, []bool) {
	vals, known := make([]float64, cols), make([]bool, cols)
	end := p.totals.Elapsed
	slice := historySpan / time.Duration(max(cols, 1))
	j := 0
	for c := range cols {
		from := end - historySpan + time.Duration(c)*slice
		to := from + slice
		for j < len(p.history) && p.history[j].to <= from {
			j++
		}
		var energy, covered float64
		for k := j; k < len(p.history) && p.history[k].from < to; k++ {
			s := p.history[k]
			w, ok := r.of(s)
			if !ok {
				continue
			}
			d := (min(s.to, to) - max(s.from, from)).Seconds()
			energy, covered = energy+w*d, covered+d
		}
		if covered > 0 {
			vals[c], known[c] = energy/covered, true
		}
	}
	return vals, known
}

// minRatio is the narrowest scale a chart draws, its highest power over
// its lowest: a Mac that holds 15 W give or take a few milliwatts would
// otherwise fill the chart's height with its noise. A range narrower is
// widened about its geometric middle, so that level power is drawn at
// mid height.
const minRatio = 1.25

// logScale is a chart's scale for powers from lo to hi: floored at a
// thousandth of hi and at 1 mW, and at least minRatio wide.
func logScale(lo, hi float64) (float64, float64) {
	if hi <= 0 {
		return 0, 0
	}
	lo = max(lo, hi/1000, 1e-3)
	if hi < lo*minRatio {
		mid := math.Sqrt(lo * hi)
		lo, hi = mid/math.Sqrt(minRatio), mid*math.Sqrt(minRatio)
	}
	return lo, hi
}

func blankRows(cols, rows int) []string {
	out := make([]string, rows)
	for i := range out {
		out[i] = strings.Repeat(" ", cols)
	}
	return out
}

// railLines are a rail's lines: its name and figures beside the chart's
// top row (those that do not fit there under them), and the chart's
// scale, its highest power at the top and its lowest at the bottom.
func railLines(r *rail, l railLayout) []string {
	lines := make([]string, l.rows)
	for row := range l.rows {
		var b strings.Builder
		if row == 0 {
			fmt.Fprintf(&b, "%-*s", nameWidth, r.name)
			for i := range l.stats {
				fmt.Fprintf(&b, " %10s", r.stat(i))
			}
		} else if i := l.stats + row - 1; i < len(railStats) {
			// The figures that do not fit beside the chart go under
			// the power now, while the chart has rows for them.
			fmt.Fprintf(&b, "%-*s %10s%s", nameWidth, " "+railStats[i], r.stat(i), strings.Repeat(" ", (l.stats-1)*statWidth))
		} else {
			b.WriteString(strings.Repeat(" ", nameWidth+l.stats*statWidth))
		}
		if l.chartWidth > 0 {
			b.WriteString(" " + r.chartRows[row])
			b.WriteString(scaleLabel(r, row, l.rows))
		}
		lines[row] = strings.TrimRight(b.String(), " ")
	}
	return lines
}

// scaleLabel is the chart's highest power beside its top row and its
// lowest beside its bottom row; a chart of one row names its highest.
func scaleLabel(r *rail, row, rows int) string {
	if !r.chartOK {
		return ""
	}
	switch {
	case row == 0:
		return fmt.Sprintf(" %9s", Watts(r.chartHi))
	case row == rows-1:
		return fmt.Sprintf(" %9s", Watts(r.chartLo))
	}
	return ""
}
