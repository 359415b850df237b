package plot

import (
	"errors"
	"fmt"
	"image/color"
	"io"

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
	pl.Legend.Top = true
	pl.Add(plotter.NewGrid())
	names := make([]string, len(b.Commands))
	banded := false
	for i, c := range b.Commands {
		names[i] = c.Name
		if c.Idle != nil {
			band, err := idleBand(float64(i), *c.Idle)
			if err != nil {
				return fmt.Errorf("%s: %w", c.Name, err)
			}
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
	pl.NominalX(names...)
	// Every command keeps its slot, one that never ran too.
	pl.X.Min, pl.X.Max = -0.5, float64(len(names))-0.5
	pl.Y.Min = 0
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
	pl.Legend.Add(c.Name, sc)
	return nil
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
