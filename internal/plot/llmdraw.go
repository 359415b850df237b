package plot

import (
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// The kinds of a request's bars, in the order they are drawn.
const (
	decodeBar = iota
	failedBar
	prefillBar
)

// barColors are the colours of the kinds of bar.
var barColors = [...]color.Color{decodeBar: decodeColor, failedBar: failedColor, prefillBar: prefillColor}

// bar is a stretch of a lane, in seconds, of one kind.
type bar struct {
	lane     int
	from, to float64
	kind     int
}

// laneBars draws requests' bars in n lanes, the first at the top.
type laneBars struct {
	bars []bar
	n    int
}

// add adds r's bars in lane k: its prefill and its decode, or one grey
// bar over it all if it failed. A request with no length at all is a
// prefill of none, widened to be seen.
func (lb *laneBars) add(r RequestMarks, k int) {
	switch {
	case r.Failed:
		lb.bars = append(lb.bars, bar{lane: k, from: r.Sent, to: r.end(), kind: failedBar})
		return
	case r.First > r.Sent || r.end() == r.Sent:
		lb.bars = append(lb.bars, bar{lane: k, from: r.Sent, to: max(r.Sent, r.First), kind: prefillBar})
	}
	if r.Last > r.First {
		lb.bars = append(lb.bars, bar{lane: k, from: max(r.Sent, r.First), to: r.Last, kind: decodeBar})
	}
}

// minBar is the narrowest a bar is drawn: a prefill of a few milliseconds
// in a benchmark of minutes is under a pixel wide.
const minBar = vg.Length(1.5)

// Plot draws the bars, each as thick as a lane allows up to 14 points.
func (lb laneBars) Plot(c draw.Canvas, pl *plot.Plot) {
	trX, trY := pl.Transforms(&c)
	half := min((trY(1)-trY(0))*0.35, vg.Points(7))
	for _, b := range lb.bars {
		y := trY(float64(lb.n - 1 - b.lane))
		x0, x1 := trX(b.from), trX(b.to)
		if w := x1 - x0; w < minBar {
			x0, x1 = x0-(minBar-w)/2, x1+(minBar-w)/2
		}
		c.FillPolygon(barColors[b.kind], c.ClipPolygonXY([]vg.Point{{X: x0, Y: y - half}, {X: x1, Y: y - half}, {X: x1, Y: y + half}, {X: x0, Y: y + half}}))
	}
}

// manyTicks are ticks at the widest round step (1, 2 or 5 times a power
// of ten) that puts at least 5 in the range: gonum's own aim at 3, too
// few to read a value off. Blank ones have no labels, for an axis whose
// values are read off another one.
type manyTicks struct{ blank bool }

func (m manyTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return nil
	}
	step := math.Pow(10, math.Ceil(math.Log10(hi-lo)))
	for k := 0; math.Floor(hi/step)-math.Ceil(lo/step) < 4; k++ {
		step /= [...]float64{2, 2.5, 2}[k%3] // 1, 0.5, 0.2, 0.1, ...
	}
	digits := max(0, int(-math.Floor(math.Log10(step)+1e-9)))
	var ticks []plot.Tick
	for i := math.Ceil(lo / step); i <= math.Floor(hi/step); i++ {
		v := i * step
		if v == 0 {
			v = 0 // not -0, which the first step below 0 rounds up to
		}
		label := strconv.FormatFloat(v, 'f', digits, 64)
		if m.blank {
			label = ""
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: label})
	}
	return ticks
}

// labelledGrid is gonum's grid at the labelled ticks, for a plot whose
// time ticks are blank: gonum's grid leaves out a tick without a label as
// a minor one.
type labelledGrid struct{ *plotter.Grid }

func (g labelledGrid) Plot(c draw.Canvas, pl *plot.Plot) {
	labelled := *pl
	labelled.X.Tick.Marker = manyTicks{}
	g.Grid.Plot(c, &labelled)
}

// panelGap is the room between a Phases picture's power and its lanes.
const panelGap = vg.Length(4)

// The height of a lane, and the least and the most of the picture's
// height that the lanes take.
const (
	laneHeight = vg.Length(16)
	minLanes   = vg.Length(48)
	mostLanes  = 0.35
)

func (pc phasesChart) draw(c draw.Canvas) {
	besideLegend(c, pc.legend, func(area draw.Canvas) vg.Rectangle {
		top, bottom := pc.stack(pc.head.draw(area))
		pc.power.Draw(top)
		pc.lanes.Draw(bottom)
		return vg.Rectangle{Min: pc.lanes.DataCanvas(bottom).Min, Max: pc.power.DataCanvas(top).Max}
	})
}

// stack splits c into the power's part above and the lanes' below, the
// lanes laneHeight each within limits, their data on one time axis.
func (pc phasesChart) stack(c draw.Canvas) (top, bottom draw.Canvas) {
	height := c.Size().Y
	axis := height - pc.lanes.DataCanvas(c).Size().Y // the time axis, under the lanes
	high := min(max(vg.Length(pc.n)*laneHeight, minLanes), height*mostLanes)
	bottom = draw.Crop(c, 0, 0, 0, -(height - high - axis))
	top = draw.Crop(c, 0, 0, high+axis+panelGap, 0)
	dt, db := pc.power.DataCanvas(top), pc.lanes.DataCanvas(bottom)
	left, right := max(dt.Min.X, db.Min.X), min(dt.Max.X, db.Max.X)
	top = draw.Crop(top, left-dt.Min.X, right-dt.Max.X, 0, 0)
	bottom = draw.Crop(bottom, left-db.Min.X, right-db.Max.X, 0, 0)
	return top, bottom
}
