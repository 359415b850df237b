// Package plot draws what exopower measured as a picture, SVG or PNG,
// with gonum.org/v1/plot: the power of each component over time, with
// the measured span shaded and its energy and average written on it.
package plot

import (
	"cmp"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/exopower/exopower/internal/power"
)

// Format is the kind of picture written.
type Format string

// The formats a plot is written in.
const (
	SVG Format = "svg"
	PNG Format = "png"
)

// FormatOf says the format a path's extension names: .svg or .png.
func FormatOf(path string) (Format, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".svg":
		return SVG, nil
	case ".png":
		return PNG, nil
	}
	return "", fmt.Errorf("%s: a plot is written as .svg or .png: end the name in one of them", path)
}

// Window is a window's average power over [Start, End], in seconds from
// the span's start (t = 0).
type Window struct {
	Start, End float64
	Power      power.Values
	// Has says whether the window holds the memory's and the system's
	// power (the SoC's parts it always holds).
	Has power.Reported
	// Wall is the metered plug's power: its readings over the window
	// (the rows of run --wall) or its reading at the window's end (watch
	// --wall), where HasWall.
	Wall    float64
	HasWall bool
}

// Power is the power of a span over time.
type Power struct {
	// Title names what was measured on its first line, "exopower run --
	// make"; further lines say more of it, above the span's figures.
	Title string
	// Caption names the Mac and the source (caption).
	Caption string
	// Origin is what t = 0 is, for the time axis: "the command's start".
	// Without one, it is the span's start.
	Origin  string
	Windows []Window
	// SpanEnd is the span's length in seconds: it runs from 0 to SpanEnd.
	SpanEnd float64
	// Energy is the span's, in joules, per component; Average in watts.
	Energy, Average power.Values
	// WallEnergy is the span's energy at the wall, where a plug read it
	// (run --wall, watch --wall); nil otherwise.
	WallEnergy *float64
}

// Size is a picture's size in pixels (of an SVG: at 96 per inch).
type Size struct{ Width, Height int }

// Check refuses a size too small to read or too big to draw.
func (s Size) Check() error {
	if s.Width < 100 || s.Height < 100 || s.Width > 20000 || s.Height > 20000 {
		return fmt.Errorf("a plot of %dx%d pixels: each side takes 100 to 20000", s.Width, s.Height)
	}
	return nil
}

// dpi is the resolution of a PNG, and the scale of an SVG's pixels.
const dpi = 96

// Components are the series drawn, in the legend's order: the wall's,
// the system's and the memory's only where some window holds them.
var Components = []string{"wall", "system", "total", "CPU", "GPU", "ANE", "DRAM"}

// component is the value of Components[i] in w.
func component(w Window, i int) float64 {
	return [...]float64{w.Wall, w.Power.System, w.Power.Total, w.Power.CPU, w.Power.GPU, w.Power.ANE, w.Power.DRAM}[i]
}

// held says whether w holds Components[i].
func held(w Window, i int) bool {
	switch Components[i] {
	case "wall":
		return w.HasWall
	case "system":
		return w.Has.System
	case "DRAM":
		return w.Has.DRAM
	}
	return true
}

// drawn are the components some window of ws holds.
func drawn(ws []Window) []int {
	var out []int
	for i := range Components {
		for _, w := range ws {
			if held(w, i) {
				out = append(out, i)
				break
			}
		}
	}
	return out
}

// WritePower draws p as format f, size big, to w.
func WritePower(w io.Writer, f Format, size Size, p Power) error {
	if len(p.Windows) == 0 {
		return errors.New("no window to plot")
	}
	if err := size.Check(); err != nil {
		return err
	}
	h, pl, err := powerPlot(p)
	if err != nil {
		return err
	}
	return writeChart(w, f, size, h, pl)
}

// writeDrawing writes as format f, size big, to w what paint draws on
// the whole picture.
func writeDrawing(w io.Writer, f Format, size Size, paint func(draw.Canvas)) error {
	width := vg.Length(size.Width) * vg.Inch / dpi
	height := vg.Length(size.Height) * vg.Inch / dpi
	var c vg.CanvasWriterTo
	switch f {
	case SVG:
		c = vgsvg.NewWith(vgsvg.UseWH(width, height))
	case PNG:
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(dpi))}
	default:
		return fmt.Errorf("unknown plot format %q", f)
	}
	paint(draw.New(c))
	if f == SVG {
		return writeSVG(w, c)
	}
	_, err := c.WriteTo(w)
	return err
}

// legendSlack is how much wider than its text the legend's column is.
const legendSlack = 1.15

// legendGap is the room between the data and the legend, and between the
// legend and the picture's edge.
const legendGap = vg.Length(12)

// besideLegend draws legend in a column of its own at the right of c, and
// with drawData the rest left of it, which returns where its data landed:
// the legend stands level with the data's top.
func besideLegend(c draw.Canvas, legend plot.Legend, drawData func(area draw.Canvas) vg.Rectangle) {
	width := legend.Rectangle(c).Size().X
	if width > 0 {
		// A viewer of an SVG without its font draws the text in another
		// (svgFontFamily), DejaVu Sans's some 15% wider: the column's
		// room keeps that in the picture.
		width *= legendSlack
	}
	if width <= 0 {
		drawData(c)
		return
	}
	area := draw.Crop(c, 0, -(width + 2*legendGap), 0, 0)
	data := drawData(area)
	legend.Top, legend.Left, legend.Padding = true, true, vg.Points(3)
	legend.Draw(draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
		Min: vg.Point{X: area.Max.X + legendGap, Y: data.Min.Y},
		Max: vg.Point{X: c.Max.X - legendGap, Y: data.Max.Y},
	}})
}

// margin is the part of a range left empty at each of its ends, so that
// nothing drawn there touches the frame.
const margin = 0.04

// padded is [lo, hi] widened by margin of its span at each end; a span of
// nothing is widened by margin of hi, or by margin.
func padded(lo, hi float64) (float64, float64) {
	d := (hi - lo) * margin
	if !(d > 0) {
		d = max(math.Abs(hi)*margin, margin)
	}
	return lo - d, hi + d
}

// fromZero is the range of values from 0 (or lo, below it) to hi, with
// room above hi, and below 0 where a value comes near it: a scale of
// energy or power starts at nothing, and what is drawn at 0 is then not
// on the axis.
func fromZero(lo, hi float64) (float64, float64) {
	bottom := min(0, lo)
	top := max(hi, bottom+1e-9)
	d := (top - bottom) * margin
	if lo-bottom < d {
		bottom -= d
	}
	return bottom, top + 2*d
}

// shorten cuts s to n runes, the cut marked: a title line that fits.
func shorten(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:max(n-1, 0)]) + "…"
	}
	return s
}

// shortenMiddle cuts s to n runes in its middle, the cut marked: a
// command keeps its program and its end, where a parameter often is,
// so that commands that differ there stay apart.
func shortenMiddle(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	head := max(n-1, 0) / 2
	tail := max(n-1-head, 0)
	return string(r[:head]) + "…" + string(r[len(r)-tail:])
}

// The colours of Components' lines, Okabe and Ito's, the total black,
// the wall a grey drawn dashed: not the Mac's own sensors.
var componentColors = []color.Color{color.Gray{Y: 0x55}, okabeVermill, color.Black, okabeBlue, okabeOrange, okabeGreen, okabePurple}

// spanColor shades the measured span, where it is shaded (shaded).
var spanColor = color.RGBA{R: 0xe8, G: 0xee, B: 0xf8, A: 0xff}

// SpanLegend names the shaded span in the legend.
const SpanLegend = "measured span"

// minOutside is how much of the time drawn the windows must reach
// outside the span for it to be shaded: a span over nearly all of it
// would shade the whole picture and tell nothing.
const minOutside = 0.1

// shaded says whether the span from 0 to spanEnd is shaded in a picture
// of windows from first to last: where it is a part of the picture.
func shaded(first, last, spanEnd float64) bool {
	whole := max(last, spanEnd) - min(first, 0)
	outside := max(0, -first) + max(0, last-spanEnd)
	return whole > 0 && outside >= minOutside*whole
}

// powerHead is the head of p's picture: the title, and the span's energy
// and average, the system's first where the windows hold it, as the
// summary gives them.
func powerHead(p Power, system, shade bool) head {
	h := headOf(p.Title, p.Caption)
	figures := fmt.Sprintf("%s over %.4g s, %s on average", joules(p.Energy.Total), p.SpanEnd, watts(p.Average.Total))
	if system {
		figures = fmt.Sprintf("system %s over %.4g s, %s on average; SoC %s",
			joules(p.Energy.System), p.SpanEnd, watts(p.Average.System), joules(p.Energy.Total))
	}
	if p.WallEnergy != nil && p.SpanEnd > 0 {
		figures = fmt.Sprintf("wall %s, %s on average; ", joules(*p.WallEnergy), watts(*p.WallEnergy/p.SpanEnd)) + figures
	}
	if shade {
		figures += " (the shaded span)"
	}
	h.lines = append(h.lines, figures)
	return h
}

func joules(j float64) string { return fmt.Sprintf("%.4g J", j) }
func watts(w float64) string  { return fmt.Sprintf("%.4g W", w) }

// powerPlot lays out the chart: a step line per component, and the span
// shaded behind them where it is a part of the picture.
func powerPlot(p Power) (head, *plot.Plot, error) {
	pl := sansPlot()
	pl.X.Label.Text = fmt.Sprintf("time from %s (s)", cmp.Or(p.Origin, "the span's start"))
	pl.Y.Label.Text = "power (W)"
	series := drawn(p.Windows)
	peak, first, last := 0.0, math.Inf(1), math.Inf(-1)
	for _, w := range p.Windows {
		first, last = min(first, w.Start), max(last, w.End)
		for _, i := range series {
			if held(w, i) {
				peak = max(peak, component(w, i))
			}
		}
	}
	shade := shaded(first, last, p.SpanEnd)
	bottom, top := fromZero(0, math.Max(1, peak))
	if shade {
		span, err := plotter.NewPolygon(plotter.XYs{{X: 0, Y: bottom}, {X: p.SpanEnd, Y: bottom}, {X: p.SpanEnd, Y: top}, {X: 0, Y: top}})
		if err != nil {
			return head{}, nil, fmt.Errorf("the span: %w", err)
		}
		span.Color = spanColor
		span.LineStyle.Width = 0
		pl.Add(span)
	}
	pl.Add(plotter.NewGrid())
	for _, i := range series {
		name := Components[i]
		l, err := plotter.NewLine(steps(p.Windows, i))
		if err != nil {
			return head{}, nil, fmt.Errorf("%s: %w", name, err)
		}
		l.Color = componentColors[i]
		l.Width = vg.Points(1.5)
		switch name {
		case "total":
			l.Width = vg.Points(2)
		case "wall":
			l.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
		}
		pl.Add(l)
		pl.Legend.Add(name, l)
	}
	if shade {
		pl.Legend.Add(SpanLegend, swatch{spanColor})
	}
	pl.Y.Min, pl.Y.Max = bottom, top
	pl.X.Min, pl.X.Max = padded(min(first, 0), max(last, p.SpanEnd))
	return powerHead(p, slices.Contains(series, 1), shade), pl, nil
}

// steps are a component's points: each window's average held over it, so
// that a gap between windows shows as the straight bridge the energy
// accounts draw over it. A window without the component is left out.
func steps(ws []Window, i int) plotter.XYs {
	xys := make(plotter.XYs, 0, 2*len(ws))
	for _, w := range ws {
		if held(w, i) {
			v := component(w, i)
			xys = append(xys, plotter.XY{X: w.Start, Y: v}, plotter.XY{X: w.End, Y: v})
		}
	}
	return xys
}
