// Package plot draws what exopower measured as a picture, SVG or PNG,
// with gonum.org/v1/plot: the power of each component over time, with
// the measured span shaded and its energy and average written on it.
package plot

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
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
}

// Power is the power of a span over time.
type Power struct {
	// Title names what was measured.
	Title   string
	Windows []Window
	// SpanEnd is the span's length in seconds: it runs from 0 to SpanEnd.
	SpanEnd float64
	// Energy is the span's, in joules, per component; Average in watts.
	Energy, Average power.Values
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

// Components are the series drawn, in the legend's order: the system's
// and the memory's only where some window holds them.
var Components = []string{"system", "total", "CPU", "GPU", "ANE", "DRAM"}

// component is the value of Components[i] in v.
func component(v power.Values, i int) float64 {
	return [...]float64{v.System, v.Total, v.CPU, v.GPU, v.ANE, v.DRAM}[i]
}

// held says whether a window with has holds Components[i].
func held(has power.Reported, i int) bool {
	switch Components[i] {
	case "system":
		return has.System
	case "DRAM":
		return has.DRAM
	}
	return true
}

// drawn are the components some window of ws holds.
func drawn(ws []Window) []int {
	var out []int
	for i := range Components {
		for _, w := range ws {
			if held(w.Has, i) {
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
	pl, err := powerPlot(p)
	if err != nil {
		return err
	}
	return writeChart(w, f, size, pl)
}

// writeChart draws pl as format f, size big, to w, its title cut to the
// width and its legend beside the data (drawBeside).
func writeChart(w io.Writer, f Format, size Size, pl *plot.Plot) error {
	pl.Title.Text = fitTitle(pl.Title.Text, size.Width)
	return writeDrawing(w, f, size, func(c draw.Canvas) { drawBeside(c, pl) })
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
	_, err := c.WriteTo(w)
	return err
}

// legendGap is the room between the data and the legend, and between the
// legend and the picture's edge.
const legendGap = vg.Length(12)

// drawBeside draws pl on c with its legend in a column of its own, right
// of the data and level with its top: inside the data, as gonum draws it,
// an entry hides the points and lines under it.
func drawBeside(c draw.Canvas, pl *plot.Plot) {
	legend := pl.Legend
	pl.Legend = plot.NewLegend()
	besideLegend(c, legend, func(area draw.Canvas) vg.Rectangle {
		pl.Draw(area)
		return pl.DataCanvas(area).Rectangle
	})
}

// besideLegend draws legend in a column of its own at the right of c, and
// with drawData the rest left of it, which returns where its data landed:
// the legend stands level with the data's top.
func besideLegend(c draw.Canvas, legend plot.Legend, drawData func(area draw.Canvas) vg.Rectangle) {
	width := legend.Rectangle(c).Size().X
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

// fitTitle cuts each line of a title to what a picture width pixels wide
// shows of it, at the title's 12 points.
func fitTitle(title string, width int) string {
	lines := strings.Split(title, "\n")
	for i, l := range lines {
		lines[i] = shorten(l, width/7)
	}
	return strings.Join(lines, "\n")
}

// powerPlot lays out the chart: the span shaded under a step line per
// component, and the span's energy and average in the title.
func powerPlot(p Power) (*plot.Plot, error) {
	pl := plot.New()
	pl.Title.Text = fmt.Sprintf("%s\n%.4g J over %.4g s, %.4g W on average (the shaded span)",
		p.Title, p.Energy.Total, p.SpanEnd, p.Average.Total)
	series := drawn(p.Windows)
	if series[0] == 0 { // the system's leads, as in the summary
		pl.Title.Text = fmt.Sprintf("%s\nsystem %.4g J over %.4g s, %.4g W on average (the shaded span); SoC %.4g J",
			p.Title, p.Energy.System, p.SpanEnd, p.Average.System, p.Energy.Total)
	}
	pl.X.Label.Text = "time from the span's start (s)"
	pl.Y.Label.Text = "power (W)"
	peak, first, last := 0.0, math.Min(0, p.Windows[0].Start), p.SpanEnd
	for _, w := range p.Windows {
		first, last = min(first, w.Start), max(last, w.End)
		for _, i := range series {
			if held(w.Has, i) {
				peak = max(peak, component(w.Power, i))
			}
		}
	}
	bottom, top := fromZero(0, math.Max(1, peak))
	span, err := plotter.NewPolygon(plotter.XYs{{X: 0, Y: bottom}, {X: p.SpanEnd, Y: bottom}, {X: p.SpanEnd, Y: top}, {X: 0, Y: top}})
	if err != nil {
		return nil, fmt.Errorf("the span: %w", err)
	}
	span.Color = color.RGBA{R: 0xe8, G: 0xee, B: 0xf8, A: 0xff}
	span.LineStyle.Width = 0
	pl.Add(span, plotter.NewGrid())
	colors := []color.Color{color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff}, color.Black, color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
		color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}, color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}}
	for _, i := range series {
		name := Components[i]
		l, err := plotter.NewLine(steps(p.Windows, i))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		l.Color = colors[i]
		l.Width = vg.Points(1.5)
		pl.Add(l)
		pl.Legend.Add(name, l)
	}
	pl.Y.Min, pl.Y.Max = bottom, top
	pl.X.Min, pl.X.Max = padded(first, last)
	return pl, nil
}

// steps are a component's points: each window's average held over it, so
// that a gap between windows shows as the straight bridge the energy
// accounts draw over it. A window without the component is left out.
func steps(ws []Window, i int) plotter.XYs {
	xys := make(plotter.XYs, 0, 2*len(ws))
	for _, w := range ws {
		if held(w.Has, i) {
			v := component(w.Power, i)
			xys = append(xys, plotter.XY{X: w.Start, Y: v}, plotter.XY{X: w.End, Y: v})
		}
	}
	return xys
}
