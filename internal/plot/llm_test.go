package plot

import (
	"bytes"
	"encoding/xml"
	"flag"
	"fmt"
	"image"
	_ "image/png" // image.Decode reads the PNGs
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

var pictures = flag.String("pictures", "", "write the Phases test pictures, PNG and SVG, to this directory to look at them")

// phasePower is the power of a Mac serving rs, window by window: idle
// at 6 W, 22 W more while a prompt is read, 9 W more a request decoding.
func phasePower(rs []RequestMarks, from, to, window float64) []Step {
	var steps []Step
	for t := from; t < to; t += window {
		mid, w := t+window/2, 6.0
		for _, r := range rs {
			if r.Sent <= mid && mid < r.First {
				w += 22
			} else if r.First <= mid && mid < r.Last {
				w += 9
			}
		}
		steps = append(steps, Step{Start: t, End: t + window, Watts: w})
	}
	return steps
}

// sixInTurn is a benchmark of six requests one after another on one Mac:
// the fifth gives one token, the sixth fails before any.
func sixInTurn() Phases {
	var rs []RequestMarks
	for i := range 6 {
		sent := 0.5 + 2*float64(i)
		rs = append(rs, RequestMarks{Sent: sent, First: sent + 0.3 + 0.05*float64(i), Last: sent + 1.6})
	}
	rs[4].Last = rs[4].First
	rs[5] = RequestMarks{Sent: rs[5].Sent, First: rs[5].Sent, Last: rs[5].Sent, Failed: true}
	return Phases{
		Title:    "llama3.2:1b, 1 in flight: 0.41 J per output token",
		Caption:  "Mac15,9 · IOReport · 6 requests",
		Series:   []NodeSeries{{Name: "Mac15,9", Windows: phasePower(rs, 0, 12.5, 0.25)}},
		Requests: rs,
	}
}

// twelveAtFour is a benchmark of twelve requests, four in flight, each
// sent as one ends, on two Macs whose windows do not line up; the
// eighth fails after its first token.
func twelveAtFour() Phases {
	free := make([]float64, 4) // when each of the four clients sends next
	var rs []RequestMarks
	for i := range 12 {
		k := slices.Index(free, slices.Min(free))
		sent := free[k] + 0.05
		first := sent + 0.2 + 0.1*float64(i%3)
		r := RequestMarks{Sent: sent, First: first, Last: first + 1.5 + 0.4*float64(i%4)}
		free[k] = r.Last
		rs = append(rs, r)
	}
	rs[7].Failed = true
	a, b := phasePower(rs, 0, 9, 0.25), phasePower(rs, 0.1, 9.1, 0.3)
	for i := range b {
		b[i].Watts /= 2
	}
	return Phases{
		Title:   "qwen2.5:7b on two Macs, 4 in flight: 1.27 J per output token, prefill 38 % of the energy",
		Caption: "mac1 (10.0.0.5:10241), mac2 (10.0.0.6:10241) · IOReport · 12 requests, 1 failed",
		Series: []NodeSeries{
			{Name: "mac1 (10.0.0.5:10241)", Windows: a},
			{Name: "mac2 (10.0.0.6:10241)", Windows: b},
		},
		Requests: rs,
	}
}

func TestRequestsThatOverlapTakeDifferentLanes(t *testing.T) {
	for _, tc := range []struct {
		name string
		rs   []RequestMarks
		want []int
	}{
		{"no request", nil, []int{}},
		{"requests one after another share the first lane",
			[]RequestMarks{{0, 1, 2, false}, {3, 3.5, 4, false}, {5, 5, 5, false}}, []int{0, 0, 0}},
		{"a request sent as another ends takes its lane",
			[]RequestMarks{{0, 1, 2, false}, {2, 2.5, 3, false}}, []int{0, 0}},
		{"overlapping requests take the lowest lane free when sent",
			[]RequestMarks{{0, 1, 4, false}, {1, 2, 3, false}, {2, 3, 5, false}, {3.5, 4, 6, false}, {4, 4.5, 7, false}},
			[]int{0, 1, 2, 1, 0}},
		{"requests are taken in the order they were sent",
			[]RequestMarks{{5, 5.5, 6, false}, {0, 1, 10, false}, {1, 1.5, 2, false}}, []int{1, 0, 1}},
		{"requests sent at once keep their order",
			[]RequestMarks{{0, 1, 2, false}, {0, 0.5, 1, false}, {0, 2, 3, false}}, []int{0, 1, 2}},
		{"a failed request holds its lane to its last edge",
			[]RequestMarks{{0, 0, 2, true}, {1, 1.5, 2.5, false}, {2, 2, 2, true}}, []int{0, 1, 0}},
	} {
		if got := lanes(tc.rs); !slices.Equal(got, tc.want) {
			t.Errorf("%s: lanes %v, want %v", tc.name, got, tc.want)
		}
	}
}

// More requests in flight than there are lanes go into the last, and
// the legend says how many.
func TestLanesBeyondTheLastAreFoldedIntoIt(t *testing.T) {
	var rs []RequestMarks
	for i := range 20 {
		rs = append(rs, RequestMarks{Sent: float64(i) / 10, First: 3, Last: 4})
	}
	if _, n, folded := lanesPanel(rs); n != maxLanes || folded != 20-maxLanes {
		t.Errorf("%d lanes, %d folded; want %d and %d", n, folded, maxLanes, 20-maxLanes)
	}
	p := sixInTurn()
	p.Requests = rs
	var buf bytes.Buffer
	if err := WritePhases(&buf, SVG, Size{Width: 1000, Height: 500}, p); err != nil {
		t.Fatal(err)
	}
	if texts, _ := svgOf(t, buf.Bytes()); !slices.Contains(texts, "4 requests folded into the last lane") {
		t.Errorf("the legend does not say 4 requests were folded: %q", texts)
	}
}

func TestAPhasesPictureDecodesAtTheSizeAsked(t *testing.T) {
	size := Size{Width: 1000, Height: 500}
	for name, p := range map[string]Phases{"six-in-turn": sixInTurn(), "twelve-at-four": twelveAtFour()} {
		for _, f := range []Format{PNG, SVG} {
			var buf bytes.Buffer
			if err := WritePhases(&buf, f, size, p); err != nil {
				t.Fatalf("%s.%s: %v", name, f, err)
			}
			if f == PNG {
				img, _, err := image.Decode(bytes.NewReader(buf.Bytes()))
				if err != nil {
					t.Fatalf("%s: the PNG does not decode: %v", name, err)
				}
				if b := img.Bounds(); b.Dx() != size.Width || b.Dy() != size.Height {
					t.Errorf("%s: the PNG is %dx%d, want %dx%d", name, b.Dx(), b.Dy(), size.Width, size.Height)
				}
			} else {
				checkSVGSize(t, name, buf.Bytes(), size)
			}
			if *pictures != "" {
				if err := os.WriteFile(filepath.Join(*pictures, name+"."+string(f)), buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// checkSVGSize says whether an SVG's root is size big, in points at 72
// an inch for pixels at 96.
func checkSVGSize(t *testing.T, name string, svg []byte, size Size) {
	t.Helper()
	var root struct {
		Width  string `xml:"width,attr"`
		Height string `xml:"height,attr"`
	}
	if err := xml.Unmarshal(svg, &root); err != nil {
		t.Fatalf("%s: the SVG is not valid XML: %v", name, err)
	}
	want := fmt.Sprintf("%gpt %gpt", float64(size.Width)*0.75, float64(size.Height)*0.75)
	if got := root.Width + " " + root.Height; got != want {
		t.Errorf("%s: the SVG is %s, want %s", name, got, want)
	}
}

// The picture names what it shows: the title and the caption, the
// Macs, their sum where there are several, and the bars' colours.
func TestAPhasesSVGNamesItsLinesAndBars(t *testing.T) {
	for name, tc := range map[string]struct {
		p         Phases
		want, not []string
	}{
		"six-in-turn":    {sixInTurn(), []string{"Mac15,9", FailedLegend}, []string{TotalName}},
		"twelve-at-four": {twelveAtFour(), []string{"mac1 (10.0.0.5:10241)", "mac2 (10.0.0.6:10241)", TotalName, FailedLegend}, nil},
	} {
		var buf bytes.Buffer
		if err := WritePhases(&buf, SVG, Size{Width: 1000, Height: 500}, tc.p); err != nil {
			t.Fatal(err)
		}
		texts, _ := svgOf(t, buf.Bytes())
		for _, want := range append(tc.want, tc.p.Title, tc.p.Caption, PrefillLegend, DecodeLegend, "power (W)", "time from the benchmark's start (s)", "requests") {
			if !slices.Contains(texts, want) {
				t.Errorf("%s: no text %q in %q", name, want, texts)
			}
		}
		for _, not := range tc.not {
			if slices.Contains(texts, not) {
				t.Errorf("%s: a text %q in %q", name, not, texts)
			}
		}
	}
}

// A title too long for the picture is cut, its cut marked, to the width
// left of the legend.
func TestAPhasesTitleIsCutToTheWidth(t *testing.T) {
	p := sixInTurn()
	p.Title = strings.Repeat("a long title ", 40)
	var buf bytes.Buffer
	if err := WritePhases(&buf, SVG, Size{Width: 1000, Height: 500}, p); err != nil {
		t.Fatal(err)
	}
	texts, _ := svgOf(t, buf.Bytes())
	i := slices.IndexFunc(texts, func(s string) bool { return strings.HasPrefix(s, "a long title") })
	if i < 0 || !strings.HasSuffix(texts[i], "…") || len(texts[i]) > 120 {
		t.Errorf("the title is not cut to the width: %q", texts)
	}
}

// The power's data and the lanes' stand one over the other, apart, on
// the same time axis, the lanes a lane's height each.
func TestThePowerStandsOverTheLanesOnOneTimeAxis(t *testing.T) {
	for name, p := range map[string]Phases{"six-in-turn": sixInTurn(), "twelve-at-four": twelveAtFour()} {
		pc, err := phasesChartOf(p)
		if err != nil {
			t.Fatal(err)
		}
		c := draw.New(vgsvg.New(750, 375))
		top, bottom := pc.stack(pc.head.draw(c))
		dt, db := pc.power.DataCanvas(top), pc.lanes.DataCanvas(bottom)
		if math.Abs(float64(dt.Min.X-db.Min.X)) > 0.01 || math.Abs(float64(dt.Max.X-db.Max.X)) > 0.01 {
			t.Errorf("%s: the power's data span x %v to %v, the lanes' %v to %v", name, dt.Min.X, dt.Max.X, db.Min.X, db.Max.X)
		}
		if bottom.Max.Y > top.Min.Y || db.Max.Y >= dt.Min.Y {
			t.Errorf("%s: the lanes (%v to %v, data to %v) reach into the power (from %v, data from %v)",
				name, bottom.Min.Y, bottom.Max.Y, db.Max.Y, top.Min.Y, dt.Min.Y)
		}
		if want := max(minLanes, vg.Length(pc.n)*laneHeight); math.Abs(float64(db.Size().Y-want)) > 0.01 {
			t.Errorf("%s: %d lanes %v high, want %v", name, pc.n, db.Size().Y, want)
		}
	}
}

// Ticks come at a round step, at least 5 in the range.
func TestTicksAreRoundAndEnough(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   []string
	}{
		{-1.2, 31, []string{"0", "5", "10", "15", "20", "25", "30"}},
		{0, 1, []string{"0.0", "0.2", "0.4", "0.6", "0.8", "1.0"}},
		{0.1, 12.4, []string{"2", "4", "6", "8", "10", "12"}},
		{95, 104, []string{"96", "98", "100", "102", "104"}},
	} {
		var got []string
		for _, tk := range (manyTicks{}).Ticks(tc.lo, tc.hi) {
			got = append(got, tk.Label)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("ticks over [%v, %v]: %q, want %q", tc.lo, tc.hi, got, tc.want)
		}
	}
}

func TestPhasesWithNothingToDrawAreRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    Phases
		size Size
		want string
	}{
		{"no series", Phases{Title: "t", Requests: sixInTurn().Requests}, Size{1000, 500}, "no window to plot"},
		{"series without windows", Phases{Series: []NodeSeries{{Name: "a"}}}, Size{1000, 500}, "no window to plot"},
		{"too small", sixInTurn(), Size{1000, 50}, "a plot of 1000x50 pixels: each side takes 100 to 20000"},
	} {
		err := WritePhases(io.Discard, PNG, tc.size, tc.p)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

// oneMacAtTheWall is a benchmark of one Mac with a plug: its power
// over twelve requests, and the plug's, a reading a second, above it.
func oneMacAtTheWall() Phases {
	p := twelveAtFour()
	p.Title = "qwen2.5:7b, 4 in flight, per output token: 3.1 J at the wall, 1.27 J (SoC), net of idle"
	p.Caption = "mac1 · IOReport · 12 requests · http://127.0.0.1:11434"
	p.Series = p.Series[:1]
	for k := range 9 {
		p.Wall = append(p.Wall, Step{Start: float64(k) + 0.05, End: float64(k) + 1.05, Watts: 30 + 8*float64(k%3)})
	}
	return p
}

// The plug's power is a dashed line above the requests, as in a run's
// picture, named first in the legend; a benchmark without a plug has
// none.
func TestAnLLMPictureDrawsTheWallDashed(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    Phases
	}{{"at the wall", oneMacAtTheWall()}, {"without", twelveAtFour()}} {
		var buf bytes.Buffer
		if err := WritePhases(&buf, SVG, Size{Width: 800, Height: 400}, tc.p); err != nil {
			t.Fatal(err)
		}
		texts, _ := svgOf(t, buf.Bytes())
		dashed := dashedPaths(t, buf.Bytes())
		if len(tc.p.Wall) == 0 {
			if len(dashed) != 0 || slices.Contains(texts, WallName) {
				t.Errorf("%s: dashed paths %v, texts %q", tc.name, dashed, texts)
			}
			continue
		}
		if !slices.Equal(dashed, []int{2 * len(tc.p.Wall), 2}) || !slices.Contains(texts, WallName) {
			t.Errorf("%s: dashed paths of %v points, want the plug's steps (%d) and the legend's (2); texts %q", tc.name, dashed, 2*len(tc.p.Wall), texts)
		}
		if i, j := slices.Index(texts, WallName), slices.Index(texts, "mac1 (10.0.0.5:10241)"); i < 0 || j < 0 || i > j {
			t.Errorf("%s: the wall is not first in the legend: %q", tc.name, texts)
		}
	}
}
