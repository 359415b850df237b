package plot

import (
	"bytes"
	"image/png"
	"io"
	"slices"
	"testing"
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
