package plot

import (
	"bytes"
	"image/color"
	"io"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/exopower/exopower/internal/wire"
)

// DefaultSize is a picture's size unless told otherwise, in pixels.
var DefaultSize = Size{Width: 1000, Height: 500}

// The colours of Okabe and Ito's palette ("Color Universal Design",
// 2008): told apart by readers who cannot tell red from green, and none
// of them read as good or bad. Yellow is left out: on white it is hard
// to see.
var (
	okabeOrange  = color.RGBA{R: 0xe6, G: 0x9f, B: 0x00, A: 0xff}
	okabeSky     = color.RGBA{R: 0x56, G: 0xb4, B: 0xe9, A: 0xff}
	okabeGreen   = color.RGBA{R: 0x00, G: 0x9e, B: 0x73, A: 0xff}
	okabeBlue    = color.RGBA{R: 0x00, G: 0x72, B: 0xb2, A: 0xff}
	okabeVermill = color.RGBA{R: 0xd5, G: 0x5e, B: 0x00, A: 0xff}
	okabePurple  = color.RGBA{R: 0xcc, G: 0x79, B: 0xa7, A: 0xff}
)

// Every picture is meant to be shared as it is, so its text is
// sans-serif and big enough to read where it is shared: at 96 pixels an
// inch, 11 points are 14.7 pixels, 14 points 18.7.
var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

const (
	titlePoints   = 14
	labelPoints   = 12
	tickPoints    = 11
	captionPoints = 12
)

// svgFontFamily is the font an SVG's text asks for. An SVG names its
// fonts without holding them, and gonum names Liberation Sans alone: a
// Mac, which has no Liberation Sans, would draw the text in its serif
// default. Arial and Helvetica have Liberation Sans's widths, so the
// text keeps its place; any sans-serif comes last.
const svgFontFamily = "'Liberation Sans',Arial,Helvetica,sans-serif"

// withFontFallbacks is an SVG whose text asks for svgFontFamily.
func withFontFallbacks(svg []byte) []byte {
	return bytes.ReplaceAll(svg, []byte("font-family:Liberation Sans;"), []byte("font-family:"+svgFontFamily+";"))
}

// writeSVG writes what c drew to w, its fonts with their fallbacks.
func writeSVG(w io.Writer, c vg.CanvasWriterTo) error {
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return err
	}
	_, err := w.Write(withFontFallbacks(buf.Bytes()))
	return err
}

// sansPlot is a plot whose text is in the pictures' fonts, with round
// ticks enough to read a value off.
func sansPlot() *plot.Plot {
	pl := plot.New()
	for _, a := range []*plot.Axis{&pl.X, &pl.Y} {
		a.Label.TextStyle.Font = font.From(sans, labelPoints)
		a.Tick.Label.Font = font.From(sans, tickPoints)
		a.Tick.Marker = manyTicks{}
	}
	pl.Legend.TextStyle.Font = font.From(sans, tickPoints)
	return pl
}

// caption names the Mac that src measured and how, as a picture's
// caption: "MacBookPro17,1 · powermetrics · macOS build 23E224"; empty
// where nothing names them.
func caption(src wire.Source) string {
	var parts []string
	for _, p := range []string{src.HWModel, src.Tool} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	if src.OSBuild != "" {
		parts = append(parts, "macOS build "+src.OSBuild)
	}
	return strings.Join(parts, " · ")
}

// head is what a picture says above its data: a title naming what was
// measured, lines of figures under it, and a caption in grey naming the
// Mac and the source.
type head struct {
	title   string
	lines   []string
	caption string
}

// headOf is the head of a title whose first line names what was
// measured and whose further lines give figures.
func headOf(title, caption string) head {
	lines := strings.Split(title, "\n")
	return head{title: lines[0], lines: lines[1:], caption: caption}
}

// headGap is the room around a picture's head.
const headGap = vg.Length(8)

// draw draws the head centred at the top of c, each line cut to its
// width, and returns what is left of c under it.
func (h head) draw(c draw.Canvas) draw.Canvas {
	type line struct {
		text   string
		points font.Length
		color  color.Color
	}
	ls := []line{{h.title, titlePoints, color.Black}}
	for _, l := range h.lines {
		ls = append(ls, line{l, labelPoints, color.Black})
	}
	ls = append(ls, line{h.caption, captionPoints, color.Gray{Y: 0x50}})
	y := c.Max.Y - headGap
	for _, l := range ls {
		if l.text == "" {
			continue
		}
		sty := text.Style{Color: l.color, Font: font.From(sans, l.points), XAlign: draw.XCenter, YAlign: draw.YTop, Handler: plot.DefaultTextHandler}
		fit := fitWidth(sty, l.text, c.Size().X-2*headGap)
		c.FillText(sty, vg.Point{X: c.Center().X, Y: y}, fit)
		y -= sty.Height(fit) + headGap/2
	}
	return draw.Crop(c, 0, 0, 0, y-c.Max.Y-headGap/2)
}

// writeChart draws pl under h as format f, size big, to w, with its
// legend beside the data (besideLegend).
func writeChart(w io.Writer, f Format, size Size, h head, pl *plot.Plot) error {
	return writeDrawing(w, f, size, func(c draw.Canvas) {
		legend := pl.Legend
		pl.Legend = plot.NewLegend()
		besideLegend(c, legend, func(area draw.Canvas) vg.Rectangle {
			area = h.draw(area)
			pl.Draw(area)
			return pl.DataCanvas(area).Rectangle
		})
	})
}

// fitWidth cuts s to what sty shows of it in width, the cut marked.
func fitWidth(sty text.Style, s string, width vg.Length) string {
	return fitBy(sty, s, width, shorten)
}

// fitMiddle cuts s in its middle to what sty shows of it in width, the
// cut marked (shortenMiddle).
func fitMiddle(sty text.Style, s string, width vg.Length) string {
	return fitBy(sty, s, width, shortenMiddle)
}

func fitBy(sty text.Style, s string, width vg.Length, cut func(string, int) string) string {
	fit := s
	for n := len([]rune(s)); n > 1 && sty.Width(fit) > width; n-- {
		fit = cut(s, n-1)
	}
	return fit
}

// swatch is a filled area's colour in the legend.
type swatch struct{ fill color.Color }

func (s swatch) Thumbnail(c *draw.Canvas) {
	y0, y1 := c.Min.Y+c.Size().Y/6, c.Max.Y-c.Size().Y/6
	c.FillPolygon(s.fill, []vg.Point{{X: c.Min.X, Y: y0}, {X: c.Max.X, Y: y0}, {X: c.Max.X, Y: y1}, {X: c.Min.X, Y: y1}})
}
