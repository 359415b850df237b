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
)

// Nodes is the power of several Macs over the same time.
type Nodes struct {
	// Title names the nodes on its first line; the lines after it give
	// the watch's figures.
	Title string
	// Caption names the Macs' models and the sources (caption).
	Caption string
	Series  []NodeSeries
}

// NodeSeries is one node's windows, in time order, none overlapping
// another.
type NodeSeries struct {
	Name    string
	Windows []Step
}

// Step is a window's average power, in watts, over [Start, End], in
// seconds from a time common to every node.
type Step struct{ Start, End, Watts float64 }

// TotalName names the sum of the nodes in the legend.
const TotalName = "total"

// WriteNodes draws n as format f, size big, to w: a step line per node
// and their sum.
func WriteNodes(w io.Writer, f Format, size Size, n Nodes) error {
	if !slices.ContainsFunc(n.Series, func(s NodeSeries) bool { return len(s.Windows) > 0 }) {
		return errors.New("no window to plot")
	}
	if err := size.Check(); err != nil {
		return err
	}
	pl := sansPlot()
	pl.X.Label.Text = "time from the first window's start (s)"
	pl.Y.Label.Text = "power (W)"
	pl.Add(plotter.NewGrid())
	if err := addLines(pl, n.Series, macColor); err != nil {
		return err
	}
	total := Total(n.Series)
	if err := addLine(pl, TotalName, total, color.Black, vg.Points(2)); err != nil {
		return err
	}
	peak, first, last := extent(total)
	pl.Y.Min, pl.Y.Max = fromZero(0, max(1, peak))
	pl.X.Min, pl.X.Max = padded(first, last)
	return writeChart(w, f, size, headOf(n.Title, n.Caption), pl)
}

// addLines draws each series that has windows as a step line of
// colour palette(i), i its place in series, named in the legend.
func addLines(pl *plot.Plot, series []NodeSeries, palette func(int) color.Color) error {
	for i, s := range series {
		if len(s.Windows) == 0 {
			continue
		}
		if err := addLine(pl, s.Name, s.Windows, palette(i), vg.Points(1.5)); err != nil {
			return err
		}
	}
	return nil
}

// addLine draws steps as a step line named name in the legend.
func addLine(pl *plot.Plot, name string, steps []Step, c color.Color, width vg.Length) error {
	l, err := plotter.NewLine(stepXYs(steps))
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	l.Color = c
	l.Width = width
	pl.Add(l)
	pl.Legend.Add(name, l)
	return nil
}

// extent is the highest power of steps, in watts, and the times, in
// seconds, where the first starts and the last ends.
func extent(steps []Step) (peak, first, last float64) {
	peak, first, last = 0, math.Inf(1), math.Inf(-1)
	for _, s := range steps {
		peak, first, last = max(peak, s.Watts), min(first, s.Start), max(last, s.End)
	}
	return peak, first, last
}

func stepXYs(steps []Step) plotter.XYs {
	xys := make(plotter.XYs, 0, 2*len(steps))
	for _, s := range steps {
		xys = append(xys, plotter.XY{X: s.Start, Y: s.Watts}, plotter.XY{X: s.End, Y: s.Watts})
	}
	return xys
}

// Total is the nodes' power summed at each moment: a step between each
// two edges of any node's windows. A node adds nothing where no window of
// its covers: before its first, after its last, in a gap.
func Total(series []NodeSeries) []Step {
	var edges []float64
	for _, s := range series {
		for _, w := range s.Windows {
			edges = append(edges, w.Start, w.End)
		}
	}
	slices.Sort(edges)
	edges = slices.Compact(edges)
	next := make([]int, len(series))
	var total []Step
	for k := 1; k < len(edges); k++ {
		a, b := edges[k-1], edges[k]
		mid, sum := (a+b)/2, 0.0
		for i, s := range series {
			for next[i] < len(s.Windows) && s.Windows[next[i]].End <= mid {
				next[i]++
			}
			if next[i] < len(s.Windows) && s.Windows[next[i]].Start <= mid {
				sum += s.Windows[next[i]].Watts
			}
		}
		if n := len(total); n > 0 && total[n-1].End == a && total[n-1].Watts == sum {
			total[n-1].End = b
			continue
		}
		total = append(total, Step{Start: a, End: b, Watts: sum})
	}
	return total
}
