package plot

import (
	"cmp"
	"errors"
	"fmt"
	"image/color"
	"io"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Phases is the power of the Macs over an llm benchmark, and its
// requests.
type Phases struct {
	// Title says what was measured and the headline figure, e.g.
	// "llama3.2:1b, 4 in flight: 0.41 J per output token".
	Title string
	// Caption names the Macs and where their power came from, e.g.
	// "Mac15,9 · IOReport · 24 requests".
	Caption string
	// Series is the power of each Mac, one series a Mac, in seconds from
	// the benchmark's start (t = 0).
	Series []NodeSeries
	// Wall is the metered plug's power over the same time (llm --wall),
	// drawn dashed as in a run's picture; none without a plug.
	Wall     []Step
	Requests []RequestMarks
}

// RequestMarks is one request's phase edges, in seconds from the same
// t = 0: sent at Sent, its first token streamed at First, its last at
// Last. First is Sent when no token came; Last is First with one token.
type RequestMarks struct {
	Sent, First, Last float64
	// Failed says the request ended in an error: it is drawn in grey
	// from Sent to its last edge, its phases not told apart.
	Failed bool
}

// The legend's entries for the requests' bars in a Phases picture.
const (
	PrefillLegend = "prefill (send → first token)"
	DecodeLegend  = "decode (first → last token)"
	FailedLegend  = "failed request"
)

// maxLanes bounds the lanes drawn: requests that would need more are
// drawn in the last, and the legend says how many.
const maxLanes = 16

// The colours of the bars, Okabe and Ito's, told apart without telling
// red from green; and of the Macs' lines, the rest of their palette
// first (the bars' colours are in another panel).
var (
	prefillColor = okabeOrange
	decodeColor  = okabeBlue
	failedColor  = color.Gray{Y: 0xa0}
	macColors    = []color.Color{okabeGreen, okabePurple, okabeVermill, okabeSky, okabeBlue, okabeOrange}
)

func macColor(i int) color.Color { return macColors[i%len(macColors)] }

// WritePhases draws p as format f, size big, to w: the Macs' power over
// time above a lane of bars per request in flight, each request's
// prefill and decode in their colours.
func WritePhases(w io.Writer, f Format, size Size, p Phases) error {
	if !slices.ContainsFunc(p.Series, func(s NodeSeries) bool { return len(s.Windows) > 0 }) {
		return errors.New("no window to plot")
	}
	if err := size.Check(); err != nil {
		return err
	}
	pc, err := phasesChartOf(p)
	if err != nil {
		return err
	}
	return writeDrawing(w, f, size, pc.draw)
}

// lanes gives each request a lane, numbered from 0: taken in the order
// they were sent, each takes the lowest lane whose requests all ended by
// its Sent, so that requests that overlap in time never share one.
func lanes(rs []RequestMarks) []int {
	order := make([]int, len(rs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(rs[a].Sent, rs[b].Sent) })
	var ends []float64 // of each lane's last request
	out := make([]int, len(rs))
	for _, i := range order {
		k := slices.IndexFunc(ends, func(end float64) bool { return end <= rs[i].Sent })
		if k < 0 {
			k, ends = len(ends), append(ends, 0)
		}
		ends[k], out[i] = rs[i].end(), k
	}
	return out
}

// end is when r's last edge is.
func (r RequestMarks) end() float64 { return max(r.Sent, r.First, r.Last) }

// phasesChart is what WritePhases draws: the power above the requests'
// lanes, both on one time axis, under a title and a caption, with a
// legend of both beside them.
type phasesChart struct {
	head         head
	power, lanes *plot.Plot
	n            int // lanes drawn
	legend       plot.Legend
}

// phasesChartOf lays out p's picture.
func phasesChartOf(p Phases) (phasesChart, error) {
	power, err := powerPanel(p.Series, p.Wall)
	if err != nil {
		return phasesChart{}, err
	}
	requests, n, folded := lanesPanel(p.Requests)
	_, first, last := extent(Total(p.Series))
	failed := false
	for _, r := range p.Requests {
		first, last, failed = min(first, r.Sent), max(last, r.end()), failed || r.Failed
	}
	power.X.Min, power.X.Max = padded(first, last)
	requests.X.Min, requests.X.Max = power.X.Min, power.X.Max
	legend := power.Legend
	power.Legend = plot.NewLegend()
	legend.Add(PrefillLegend, swatch{prefillColor})
	legend.Add(DecodeLegend, swatch{decodeColor})
	if failed {
		legend.Add(FailedLegend, swatch{failedColor})
	}
	if folded > 0 {
		legend.Add(fmt.Sprintf("%d requests folded into the last lane", folded))
	}
	return phasesChart{head: head{title: p.Title, caption: p.Caption}, power: power, lanes: requests, n: n, legend: legend}, nil
}

// legendName is a Mac's name cut to what a legend shows beside the data.
func legendName(name string) string {
	if name == "" {
		return "power"
	}
	return shortenMiddle(name, 28)
}

// powerPanel is the upper part of a Phases picture: a Mac's power as a
// black step line, or several Macs' as coloured ones and their sum in
// black, and the plug's at the wall dashed in grey, where wall has it.
// Its time axis is labelled on the lanes' part, under it.
func powerPanel(series []NodeSeries, wall []Step) (*plot.Plot, error) {
	pl := sansPlot()
	pl.Y.Label.Text = "power (W)"
	pl.X.Tick.Marker = manyTicks{blank: true}
	pl.Add(labelledGrid{plotter.NewGrid()})
	drawn := slices.DeleteFunc(slices.Clone(series), func(s NodeSeries) bool { return len(s.Windows) == 0 })
	total := Total(series)
	peak, _, _ := extent(total)
	if len(wall) > 0 {
		// First in the legend, as in a run's picture.
		l, err := plotter.NewLine(stepXYs(wall))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", WallName, err)
		}
		l.Color, l.Width, l.Dashes = wallColor, vg.Points(1.5), wallDashes
		pl.Add(l)
		pl.Legend.Add(WallName, l)
		wallPeak, _, _ := extent(wall)
		peak = max(peak, wallPeak)
	}
	if len(drawn) == 1 {
		if err := addLine(pl, legendName(drawn[0].Name), drawn[0].Windows, color.Black, vg.Points(2)); err != nil {
			return nil, err
		}
	} else {
		named := slices.Clone(series)
		for i := range named {
			named[i].Name = legendName(named[i].Name)
		}
		if err := addLines(pl, named, macColor); err != nil {
			return nil, err
		}
		if err := addLine(pl, TotalName, total, color.Black, vg.Points(2)); err != nil {
			return nil, err
		}
	}
	pl.Y.Min, pl.Y.Max = fromZero(0, max(1, peak))
	return pl, nil
}

// WallName names the plug's power at the wall in a legend.
const WallName = "wall"

// lanesPanel is the lower part of a Phases picture: each request a bar
// in its lane, the first lane at the top. It says how many lanes it
// draws, and how many requests went into the last beyond maxLanes.
func lanesPanel(rs []RequestMarks) (pl *plot.Plot, n, folded int) {
	pl = sansPlot()
	pl.X.Label.Text = "time from the benchmark's start (s)"
	pl.Y.Label.Text = "requests"
	pl.Y.Tick.Marker = plot.ConstantTicks(nil)
	grid := plotter.NewGrid()
	grid.Horizontal.Color = nil
	n = 1
	var bars laneBars
	for i, k := range lanes(rs) {
		if k >= maxLanes {
			k, folded = maxLanes-1, folded+1
		}
		n = max(n, k+1)
		bars.add(rs[i], k)
	}
	bars.n = n
	// A prefill drawn over the decode beside it stays in sight where it is
	// widened to be seen.
	slices.SortStableFunc(bars.bars, func(a, b bar) int { return cmp.Compare(a.kind, b.kind) })
	pl.Add(grid, bars)
	pl.Y.Min, pl.Y.Max = padded(-0.5, float64(n)-0.5)
	return pl, n, folded
}
