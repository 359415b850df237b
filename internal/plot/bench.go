package plot

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"

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
	// Wall are the runs' energies at the wall (bench --wall), in
	// joules, those the plug measured; none without a plug.
	Wall []float64
	// IdleWall is what the idle Mac draws at the wall over the command's
	// mean duration, in joules; nil without a baseline there.
	IdleWall *Band
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
	// With the wall, its runs and its idle band, beside the Mac's.
	WallRunLegend  = "a run's energy at the wall"
	IdleWallLegend = "idle at the wall × mean duration"
)

// runColor is the colour of a run's point, of every command: the
// commands are named on their slots, and one colour keeps the legend's
// mark the points' own.
var runColor = okabeBlue

// The wall's marks are in the wall's grey of the power's pictures, its
// lines dashed and its points squares: not the Mac's own sensors, and
// told apart from the Mac's without their colour.
var (
	wallColor     = componentColors[0]
	wallDashes    = []vg.Length{vg.Points(6), vg.Points(3)}
	idleWallColor = color.Gray{Y: 0xe4}
)

// wallShift is how far from its slot's middle each half of a slot is
// drawn where the runs have the wall: the Mac's to the left, the
// wall's to the right.
const wallShift = 0.2

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
	halves := []benchHalf{{runs: BenchCommand.mac, mark: runMark(), legend: RunLegend, idleLegend: IdleLegend, band: idleBand}}
	if slices.ContainsFunc(b.Commands, func(c BenchCommand) bool { return len(c.Wall) > 0 }) {
		halves[0].shift = -wallShift
		halves = append(halves, benchHalf{shift: wallShift, runs: BenchCommand.wall, mark: wallMark(), legend: WallRunLegend,
			idleLegend: IdleWallLegend, band: idleWallBand, dashed: true})
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, h := range halves {
		l, u, err := h.draw(pl, b.Commands)
		if err != nil {
			return err
		}
		lo, hi = min(lo, l), max(hi, u)
	}
	pl.Legend.Add(BoxLegend, boxThumb{})
	pl.NominalX(slotNames(pl, size, b.Commands)...)
	// Every command keeps its slot, one that never ran too.
	pl.X.Min, pl.X.Max = -0.5, float64(len(b.Commands))-0.5
	pl.Y.Min, pl.Y.Max = fromZero(lo, hi)
	return writeChart(w, f, size, headOf(b.Title, b.Caption), pl)
}

// benchHalf is what a bench's picture draws in each command's slot of
// one figure, the Mac's or the wall's: the runs, their box, the idle
// band behind them, shifted from the slot's middle where both are
// drawn.
type benchHalf struct {
	shift              float64
	runs               func(BenchCommand) ([]float64, *Band)
	mark               *plotter.Scatter
	legend, idleLegend string
	band               func(x, width float64, b Band) (*plotter.Polygon, error)
	dashed             bool
}

func (c BenchCommand) mac() ([]float64, *Band)  { return c.Energies, c.Idle }
func (c BenchCommand) wall() ([]float64, *Band) { return c.Wall, c.IdleWall }

// draw adds h's marks of every command to pl, and their legend's
// entries, and says the lowest and highest energy drawn.
func (h benchHalf) draw(pl *plot.Plot, cs []BenchCommand) (lo, hi float64, err error) {
	lo, hi = math.Inf(1), math.Inf(-1)
	// A half of a slot is narrower than a slot of its own.
	width := 0.35 - math.Abs(h.shift)*0.9
	banded := false
	for i, c := range cs {
		runs, idle := h.runs(c)
		x := float64(i) + h.shift
		for _, e := range runs {
			lo, hi = min(lo, e), max(hi, e)
		}
		if idle != nil {
			band, err := h.band(x, width, *idle)
			if err != nil {
				return lo, hi, fmt.Errorf("%s: %w", c.Name, err)
			}
			lo, hi = min(lo, idle.Center-idle.Error), max(hi, idle.Center+idle.Error)
			pl.Add(band)
			if !banded {
				pl.Legend.Add(h.idleLegend, band)
				banded = true
			}
		}
		if err := h.addRuns(pl, x, width, runs); err != nil {
			return lo, hi, fmt.Errorf("%s: %w", c.Name, err)
		}
	}
	pl.Legend.Add(h.legend, h.mark)
	return lo, hi, nil
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

// wallMark is a run's point at the wall, as drawn and as the legend
// shows it.
func wallMark() *plotter.Scatter {
	sc, _ := plotter.NewScatter(plotter.XYs{{}}) // one finite point: no error
	sc.Color, sc.Shape, sc.Radius = wallColor, draw.BoxGlyph{}, vg.Points(3)
	return sc
}

// addRuns draws runs at x, a slot's middle (or a half's, of a slot
// width either side of it): a box over them and a point per run, spread
// sideways in run order so that equal energies stay apart.
func (h benchHalf) addRuns(pl *plot.Plot, x, width float64, runs []float64) error {
	if len(runs) == 0 {
		return nil
	}
	box, err := plotter.NewBoxPlot(vg.Points(36*width/0.35), x, plotter.Values(runs))
	if err != nil {
		return err
	}
	if h.dashed {
		for _, sty := range []*draw.LineStyle{&box.BoxStyle, &box.MedianStyle, &box.WhiskerStyle} {
			sty.Color, sty.Dashes = wallColor, wallDashes
		}
	}
	pts := make(plotter.XYs, len(runs))
	spread := width * 0.2 / 0.35
	for k, e := range runs {
		pts[k] = plotter.XY{X: x - spread + 2*spread*(float64(k)+0.5)/float64(len(runs)), Y: e}
	}
	sc, err := plotter.NewScatter(pts)
	if err != nil {
		return err
	}
	sc.GlyphStyle = h.mark.GlyphStyle
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

// idleBand is the baseline's band across x, width either side: a
// filled strip Center ± Error, outlined so that a band with no width
// still shows.
func idleBand(x, width float64, b Band) (*plotter.Polygon, error) {
	lo, hi := b.Center-b.Error, b.Center+b.Error
	p, err := plotter.NewPolygon(plotter.XYs{{X: x - width, Y: lo}, {X: x + width, Y: lo}, {X: x + width, Y: hi}, {X: x - width, Y: hi}})
	if err != nil {
		return nil, err
	}
	// Okabe and Ito's orange, its fill light enough to see the runs on.
	p.Color = color.RGBA{R: 0xfa, G: 0xe2, B: 0xb3, A: 0xff}
	p.LineStyle.Color = okabeOrange
	p.LineStyle.Width = vg.Points(1)
	return p, nil
}

// idleWallBand is the baseline's band at the wall: the same strip in
// the wall's grey, outlined dashed.
func idleWallBand(x, width float64, b Band) (*plotter.Polygon, error) {
	p, err := idleBand(x, width, b)
	if err != nil {
		return nil, err
	}
	p.Color, p.LineStyle.Color, p.LineStyle.Dashes = idleWallColor, wallColor, wallDashes
	return p, nil
}
