package plot

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Bench is the energy of every run of each command of a bench.
type Bench struct {
	// Title names the commands on its first line; the lines after it
	// say what the comparison found.
	Title string
	// Caption names the Mac and the source (caption).
	Caption  string
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

// runColor is the colour of a run's point, of every command: the
// commands are named on their slots, and one colour keeps the legend's
// mark the points' own.
var runColor = okabeBlue

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
	pl := sansPlot()
	pl.Y.Label.Text = "energy per run (J)"
	pl.Add(plotter.NewGrid())
	lo, hi := math.Inf(1), math.Inf(-1)
	banded := false
	for i, c := range b.Commands {
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
	pl.Legend.Add(RunLegend, runMark())
	pl.Legend.Add(BoxLegend, boxThumb{})
	pl.NominalX(slotNames(pl, size, b.Commands)...)
	// Every command keeps its slot, one that never ran too.
	pl.X.Min, pl.X.Max = -0.5, float64(len(b.Commands))-0.5
	pl.Y.Min, pl.Y.Max = fromZero(lo, hi)
	return writeChart(w, f, size, headOf(b.Title, b.Caption), pl)
}

// slotNames are the commands' names, each cut in its middle to what its
// slot shows in pl's tick font: the data take some 60% of the picture's
// width, the rest is the legend and the power's axis.
func slotNames(pl *plot.Plot, size Size, cs []BenchCommand) []string {
	slot := 0.6 * vg.Length(size.Width) * vg.Inch / dpi / vg.Length(max(1, len(cs)))
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = fitMiddle(pl.X.Tick.Label, c.Name, 0.9*slot)
	}
	return names
}

// runMark is a run's point, as drawn and as the legend shows it.
func runMark() *plotter.Scatter {
	sc, _ := plotter.NewScatter(plotter.XYs{{}}) // one finite point: no error
	sc.Color, sc.Shape, sc.Radius = runColor, draw.CircleGlyph{}, vg.Points(3)
	return sc
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
	mark := runMark()
	sc.GlyphStyle = mark.GlyphStyle
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
	// Okabe and Ito's orange, its fill light enough to see the runs on.
	p.Color = color.RGBA{R: 0xfa, G: 0xe2, B: 0xb3, A: 0xff}
	p.LineStyle.Color = okabeOrange
	p.LineStyle.Width = vg.Points(1)
	return p, nil
}
