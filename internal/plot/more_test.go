package plot

import (
	"bytes"
	"image/png"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/exopower/exopower/internal/bench"
	"github.com/exopower/exopower/internal/wire"
)

var aBench = Bench{
	Title: "least energy: a (2 J on average)",
	Commands: []BenchCommand{
		{Name: "a", Energies: []float64{1, 2, 3}, Idle: &Band{Center: 0.5, Error: 0.1}},
		{Name: "b c", Energies: []float64{4, 4.5}, Idle: &Band{Center: 1, Error: 0}},
		{Name: "never ran"},
	},
}

var nodes = Nodes{
	Title: "watch: 2 nodes",
	Series: []NodeSeries{
		{Name: "ten", Windows: []Step{{0, 1, 10}, {1, 2, 10}}},
		{Name: "twenty", Windows: []Step{{0.5, 1.5, 20}, {1.5, 2.5, 20}}},
	},
}

// Each command is named once, on its slot under the data; the legend
// says what the marks are: a run, the box, and the baseline's band once.
func TestABenchSVGNamesEachCommandOnItsSlotAndItsMarksInTheLegend(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteBench(&buf, SVG, Size{Width: 800, Height: 400}, aBench); err != nil {
		t.Fatal(err)
	}
	texts, _ := svgOf(t, buf.Bytes())
	if !slices.Contains(texts, aBench.Title) {
		t.Errorf("no title %q in %q", aBench.Title, texts)
	}
	for name, want := range map[string]int{"a": 1, "b c": 1, "never ran": 1, IdleLegend: 1, RunLegend: 1, BoxLegend: 1} {
		if n := count(texts, name); n != want {
			t.Errorf("%q shows %d times, want %d", name, n, want)
		}
	}
}

func TestABenchWithoutBaselineHasNoBand(t *testing.T) {
	b := Bench{Title: "t", Commands: []BenchCommand{{Name: "a", Energies: []float64{1}}}}
	var buf bytes.Buffer
	if err := WriteBench(&buf, SVG, Size{Width: 800, Height: 400}, b); err != nil {
		t.Fatal(err)
	}
	if texts, _ := svgOf(t, buf.Bytes()); slices.Contains(texts, IdleLegend) {
		t.Errorf("a band in the legend without a baseline: %q", texts)
	}
}

func TestANodesSVGHoldsALinePerNodeAndTheTotal(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteNodes(&buf, SVG, Size{Width: 800, Height: 400}, nodes); err != nil {
		t.Fatal(err)
	}
	texts, paths := svgOf(t, buf.Bytes())
	for _, want := range []string{"ten", "twenty", TotalName, nodes.Title} {
		if !slices.Contains(texts, want) {
			t.Errorf("no text %q in %q", want, texts)
		}
	}
	// Each node's line holds two points a window; the total's, two a
	// step of the sum: 0-0.5, 0.5-2, 2-2.5.
	for _, want := range []int{4, 4, 6} {
		if !slices.Contains(paths, want) {
			t.Errorf("no path of %d points among %v", want, paths)
		}
	}
}

func TestTheTotalIsTheNodesSumAtEachMoment(t *testing.T) {
	for _, tc := range []struct {
		name   string
		series []NodeSeries
		want   []Step
	}{
		{"two overlapping nodes", nodes.Series, []Step{{0, 0.5, 10}, {0.5, 2, 30}, {2, 2.5, 20}}},
		{"a node alone", []NodeSeries{{Windows: []Step{{0, 1, 3}, {1, 2, 4}}}}, []Step{{0, 1, 3}, {1, 2, 4}}},
		{"a gap in a node adds nothing",
			[]NodeSeries{{Windows: []Step{{0, 1, 3}, {2, 3, 3}}}, {Windows: []Step{{0, 3, 1}}}},
			[]Step{{0, 1, 4}, {1, 2, 1}, {2, 3, 4}}},
		{"a node without windows", []NodeSeries{{}, {Windows: []Step{{0, 1, 2}}}}, []Step{{0, 1, 2}}},
	} {
		if got := Total(tc.series); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestBenchAndNodesPNGsDecode(t *testing.T) {
	size := Size{Width: 640, Height: 320}
	for name, write := range map[string]func(io.Writer) error{
		"bench": func(w io.Writer) error { return WriteBench(w, PNG, size, aBench) },
		"nodes": func(w io.Writer) error { return WriteNodes(w, PNG, size, nodes) },
	} {
		var buf bytes.Buffer
		if err := write(&buf); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		img, err := png.Decode(&buf)
		if err != nil {
			t.Fatalf("%s: the PNG does not decode: %v", name, err)
		}
		if b := img.Bounds(); b.Dx() != size.Width || b.Dy() != size.Height {
			t.Errorf("%s: the PNG is %dx%d, want 640x320", name, b.Dx(), b.Dy())
		}
	}
}

func TestBenchesAndNodesWithNothingToDrawAreRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"a bench without runs", WriteBench(io.Discard, SVG, Size{800, 400}, Bench{Commands: []BenchCommand{{Name: "a"}}}), "no run to plot"},
		{"nodes without windows", WriteNodes(io.Discard, SVG, Size{800, 400}, Nodes{Series: []NodeSeries{{Name: "a"}}}), "no window to plot"},
		{"a bench too small", WriteBench(io.Discard, SVG, Size{800, 10}, aBench), "a plot of 800x10 pixels: each side takes 100 to 20000"},
		{"nodes too big", WriteNodes(io.Discard, SVG, Size{30000, 400}, nodes), "a plot of 30000x400 pixels: each side takes 100 to 20000"},
	} {
		if tc.err == nil || tc.err.Error() != tc.want {
			t.Errorf("%s: error %v, want %q", tc.name, tc.err, tc.want)
		}
	}
}

func count(xs []string, x string) int {
	n := 0
	for _, s := range xs {
		if s == x {
			n++
		}
	}
	return n
}

// aBenchAtTheWall is aBench measured at the wall too: each command's
// runs there beside the Mac's, and the idle band at the wall.
var aBenchAtTheWall = Bench{
	Title: "least energy: a (2 J on average; 9 J at the wall)",
	Commands: []BenchCommand{
		{Name: "a", Energies: []float64{1, 2, 3}, Idle: &Band{Center: 0.5, Error: 0.1}, Wall: []float64{8, 9, 10}, IdleWall: &Band{Center: 6, Error: 0.5}},
		{Name: "b c", Energies: []float64{4, 4.5}, Idle: &Band{Center: 1, Error: 0}, Wall: []float64{12, 13}, IdleWall: &Band{Center: 7, Error: 0.5}},
		{Name: "never ran"},
	},
}

// squares are the wall's points of an SVG, a filled square each (the
// legend's among them): their centres, in the SVG's points.
func squares(t *testing.T, svg []byte) [][2]float64 {
	t.Helper()
	sq := regexp.MustCompile(`<path d="M([0-9.-]+),([0-9.-]+)L([0-9.-]+),([0-9.-]+)L[0-9.,-]+L[0-9.,-]+Z"\s+style="fill:#555555"`)
	var out [][2]float64
	for _, m := range sq.FindAllStringSubmatch(string(svg), -1) {
		x0, _ := strconv.ParseFloat(m[1], 64)
		y0, _ := strconv.ParseFloat(m[2], 64)
		x1, _ := strconv.ParseFloat(m[3], 64)
		out = append(out, [2]float64{(x0 + x1) / 2, y0})
	}
	return out
}

// A bench measured at the wall draws each command's runs there beside
// the Mac's, in the wall's grey, squares over a dashed box, with the
// idle band at the wall behind them; a run the plug did not cover is
// left out, as bench's figures leave it out. A bench without the wall
// draws none of it.
func TestABenchAtTheWallDrawsItBesideTheMacs(t *testing.T) {
	rep := bench.Report{SchemaVersion: 1, Type: "bench", Complete: true,
		Baseline: &bench.Baseline{PowerWatts: 2, Wall: &bench.IdleWall{PowerWatts: 30}}}
	spread := func(m float64) *bench.Spread { return &bench.Spread{Mean: wire.Num(m)} }
	unc := wire.Num(1.5)
	for i, cmd := range []string{"sleep 1", "sleep 2"} {
		r := bench.Result{Command: cmd, EnergyJoules: spread(float64(10 * (i + 1))), DurationSeconds: spread(float64(i + 1)),
			Wall: &bench.ResultWall{EnergyJoules: spread(float64(50 * (i + 1))), NetEnergyUncertaintyJoules: &unc}}
		for k := range 3 {
			w := &bench.RunWall{EnergyJoules: wire.Num(50*(i+1) + k), Coverage: 1}
			if i == 1 && k == 2 {
				w.Coverage = 0.5 // the plug did not answer over it
			}
			r.Runs = append(r.Runs, bench.Run{EnergyJoules: wire.Components{Total: wire.Num(10*(i+1) + k)}, Wall: w})
		}
		rep.Results = append(rep.Results, r)
	}
	b := benchChart(&rep)
	if !slices.Equal(b.Commands[0].Wall, []float64{50, 51, 52}) || !slices.Equal(b.Commands[1].Wall, []float64{100, 101}) ||
		*b.Commands[1].IdleWall != (Band{Center: 60, Error: 1.5}) || !strings.Contains(b.Title, "least energy: sleep 1 (10.00 J on average; 50.00 J at the wall)") {
		t.Errorf("the bench's picture at the wall: %+v", b)
	}
	for _, tc := range []struct {
		name string
		b    Bench
		wall bool
	}{{"at the wall", aBenchAtTheWall, true}, {"without", aBench, false}} {
		var buf bytes.Buffer
		if err := WriteBench(&buf, SVG, Size{Width: 800, Height: 400}, tc.b); err != nil {
			t.Fatal(err)
		}
		texts, _ := svgOf(t, buf.Bytes())
		sq, dashed := squares(t, buf.Bytes()), dashedPaths(t, buf.Bytes())
		legend := slices.Contains(texts, WallRunLegend) && slices.Contains(texts, IdleWallLegend)
		if !tc.wall {
			if len(sq) != 0 || len(dashed) != 0 || legend {
				t.Errorf("%s: %d squares, %d dashed paths, texts %q", tc.name, len(sq), len(dashed), texts)
			}
			continue
		}
		// A square a run at the wall and the legend's; a dashed box,
		// median and two whiskers a command, two bands and the
		// legend's.
		if len(sq) != 5+1 || len(dashed) < 2*4+2 || !legend {
			t.Errorf("%s: %d squares (want 6), %d dashed paths, texts %q", tc.name, len(sq), len(dashed), texts)
		}
		l := layoutOf(t, buf.Bytes())
		circles := regexp.MustCompile(`<path d="M([0-9.-]+),[^"]*A[^"]*"\s+style="fill:#0072B2"`).FindAllStringSubmatch(buf.String(), -1)
		// Each command's squares are right of its circles, and left of
		// the next command's circles.
		for _, s := range sq[:5] {
			if s[0] > l.data.x1 {
				t.Errorf("%s: a run's square at x %.1f, beyond the data", tc.name, s[0])
			}
		}
		if first, _ := strconv.ParseFloat(circles[0][1], 64); !(sq[0][0] > first) {
			t.Errorf("%s: the first command's runs at the wall (x %.1f) are not right of its own (x %.1f)", tc.name, sq[0][0], first)
		}
	}
}
