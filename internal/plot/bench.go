package plot

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Bench is the energy of every run of each command of a bench.
type Bench struct {
	// Title says what the comparison found.
	Title    string
	Commands []BenchCommand
}

// BenchCommand is one command's runs.
type BenchCommand struct {
	Name string
	// Energies are the runs' gross energies, in joules.
	Energies []float64
	// Idle is what the idle Mac uses over the command's mean duration,
	// in joules; nil without a baseline.
	Idle *Band
}

// Band is a value in joules and its uncertainty, ± Error.
type Band struct{ Center, Error float64 }

// IdleLegend names the baseline's bands in a bench's legend.
const IdleLegend = "idle baseline × mean duration"

// The legend's entries of a bench's picture: the commands are named on
// their slots, under the data, so the legend says what the marks are.
const (
	RunLegend = "a run's energy"
	BoxLegend = "the runs' quartiles and median"
)

// WriteBench draws b as format f, size big, to w: the runs of each
// command as points over a box, and the idle baseline's band behind them.
func WriteBench(w io.Writer, f Format, size Size, b Bench) error {
	runs := 0
	for _, c := range b.Commands {
		runs += len(c.Energies)
	}
	if runs == 0 {
		return errors.New("no run to plot")
	}
	if err := size.Check(); err != nil {
		return err
	}
	pl := plot.New()
	pl.Title.Text = b.Title
	pl.Y.Label.Text = "energy per run (J)"
	pl.Add(plotter.NewGrid())
	names := make([]string, len(b.Commands))
	banded := false
	lo, hi := math.Inf(1), math.Inf(-1)
	// A tick's name fits its slot, at about 6.5 pixels a rune of its 10
	// points, with room between: the data take some 70% of the width.
	tick := max(8, int(0.6*float64(size.Width)/float64(len(b.Commands))/6.5))
	for i, c := range b.Commands {
		names[i] = shortenMiddle(c.Name, tick)
		for _, e := range c.Energies {
			lo, hi = min(lo, e), max(hi, e)
		}
		if c.Idle != nil {
			band, err := idleBand(float64(i), *c.Idle)
			if err != nil {
				return fmt.Errorf("%s: %w", c.Name, err)
			}
			lo, hi = min(lo, c.Idle.Center-c.Idle.Error), max(hi, c.Idle.Center+c.Idle.Error)
			pl.Add(band)
			if !banded {
				pl.Legend.Add(IdleLegend, band)
				banded = true
			}
		}
		if err := addRuns(pl, i, c); err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
	}
	run, err := plotter.NewScatter(plotter.XYs{{}})
	if err != nil {
		return err
	}
	run.Color, run.Shape, run.Radius = color.Gray{Y: 0x60}, draw.CircleGlyph{}, vg.Points(3)
	pl.Legend.Add(RunLegend, run)
	pl.Legend.Add(BoxLegend, boxThumb{})
	pl.NominalX(names...)
	// Every command keeps its slot, one that never ran too.
	pl.X.Min, pl.X.Max = -0.5, float64(len(names))-0.5
	pl.Y.Min, pl.Y.Max = fromZero(lo, hi)
	return writeChart(w, f, size, pl)
}

// addRuns draws command i's runs: a box over them and a point per run,
// spread sideways in run order so that equal energies stay apart.
func addRuns(pl *plot.Plot, i int, c BenchCommand) error {
	if len(c.Energies) == 0 {
		return nil
	}
	box, err := plotter.NewBoxPlot(vg.Points(36), float64(i), plotter.Values(c.Energies))
	if err != nil {
		return err
	}
	pts := make(plotter.XYs, len(c.Energies))
	for k, e := range c.Energies {
		pts[k] = plotter.XY{X: float64(i) - 0.2 + 0.4*(float64(k)+0.5)/float64(len(c.Energies)), Y: e}
	}
	sc, err := plotter.NewScatter(pts)
	if err != nil {
		return err
	}
	sc.Color = plotutil.Color(i)
	sc.Shape = draw.CircleGlyph{}
	sc.Radius = vg.Points(3)
	pl.Add(box, sc)
	return nil
}

// boxThumb is a box plot's mark in the legend: a box with its median.
type boxThumb struct{}

func (boxThumb) Thumbnail(c *draw.Canvas) {
	x0, x1 := c.Min.X+c.Size().X/4, c.Max.X-c.Size().X/4
	y0, y1 := c.Min.Y+c.Size().Y/8, c.Max.Y-c.Size().Y/8
	ym := (y0 + y1) / 2
	sty := draw.LineStyle{Color: color.Black, Width: vg.Points(1)}
	c.StrokeLines(sty, []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}, {X: x0, Y: y0}})
	c.StrokeLine2(sty, x0, ym, x1, ym)
}

// idleBand is the baseline's band across slot x: a filled strip
// Center ± Error, outlined so that a band with no width still shows.
func idleBand(x float64, b Band) (*plotter.Polygon, error) {
	lo, hi := b.Center-b.Error, b.Center+b.Error
	p, err := plotter.NewPolygon(plotter.XYs{{X: x - 0.35, Y: lo}, {X: x + 0.35, Y: lo}, {X: x + 0.35, Y: hi}, {X: x - 0.35, Y: hi}})
	if err != nil {
		return nil, err
	}
	p.Color = color.RGBA{R: 0xfd, G: 0xe6, B: 0xc8, A: 0xff}
	p.LineStyle.Color = color.RGBA{R: 0xe0, G: 0x90, B: 0x40, A: 0xff}
	p.LineStyle.Width = vg.Points(1)
	return p, nil
}
