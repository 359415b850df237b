package plot

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/exopower/exopower/internal/power"
)

// svgPixels is how many pixels a unit of an SVG's drawing is shown at:
// gonum draws in points, and the root gives the picture's size in
// points (at 72 an inch, for pixels at 96) over a view box of as many
// units.
func svgPixels(t *testing.T, svg []byte) float64 {
	t.Helper()
	var root struct {
		Width   string `xml:"width,attr"`
		ViewBox string `xml:"viewBox,attr"`
	}
	if err := xml.Unmarshal(svg, &root); err != nil {
		t.Fatalf("the SVG is not valid XML: %v", err)
	}
	points, err := strconv.ParseFloat(strings.TrimSuffix(root.Width, "pt"), 64)
	box := strings.Fields(root.ViewBox)
	if err != nil || !strings.HasSuffix(root.Width, "pt") || len(box) != 4 {
		t.Fatalf("the SVG's root is %q wide over the view box %q", root.Width, root.ViewBox)
	}
	units, _ := strconv.ParseFloat(box[2], 64)
	return points * 96 / 72 / units
}

// Every text of every picture is sans-serif, with fallbacks for a viewer
// without Liberation Sans (a Mac has Arial and Helvetica, of the same
// widths), and at least 14 pixels high at the default size, the title
// the biggest: a picture is read where it is shared.
func TestEveryPictureIsInSansSerifBigEnoughToRead(t *testing.T) {
	fonts := regexp.MustCompile(`font-family:([^;"]*);[^"]*?font-size:([0-9.]+)px`)
	for name, svg := range chartsAt(t, DefaultSize) {
		scale := svgPixels(t, svg)
		styles := fonts.FindAllStringSubmatch(string(svg), -1)
		if n := bytes.Count(svg, []byte("<text ")); len(styles) != n || n == 0 {
			t.Fatalf("%s: %d texts, %d with a font and its size", name, n, len(styles))
		}
		smallest, biggest := math.Inf(1), 0.0
		for _, s := range styles {
			size, _ := strconv.ParseFloat(s[2], 64)
			if s[1] != svgFontFamily {
				t.Errorf("%s: a text in %s, want %s", name, s[1], svgFontFamily)
			}
			smallest, biggest = min(smallest, size*scale), max(biggest, size*scale)
		}
		if smallest < 14 || biggest < 18 {
			t.Errorf("%s: texts from %.1f to %.1f pixels high, want 14 or more, the title 18 or more", name, smallest, biggest)
		}
	}
}

// The colours a picture's marks may take, legend's included: Okabe and
// Ito's, black, greys, and the light fills behind the data (the span's,
// the baseline's band).
var markColours = regexp.MustCompile(`(?:stroke|fill):(#[0-9A-F]{6})`)

func allowedColour(c string) bool {
	switch c {
	case "#E69F00", "#56B4E9", "#009E73", "#0072B2", "#D55E00", "#CC79A7", "#E8EEF8", "#FAE2B3":
		return true
	}
	return c[1:3] == c[3:5] && c[3:5] == c[5:7] // a grey, black or white
}

// Every mark of every picture is in Okabe and Ito's colours, which
// readers who cannot tell red from green tell apart, and none of which
// reads as good or bad.
func TestEveryPictureIsInColoursTheColourBlindTellApart(t *testing.T) {
	for name, svg := range charts(t) {
		l := layoutOf(t, svg)
		for _, style := range l.markStyles {
			for _, m := range markColours.FindAllStringSubmatch(style, -1) {
				if !allowedColour(m[1]) {
					t.Errorf("%s: a mark in %s (%s), not one of Okabe and Ito's", name, m[1], style)
				}
			}
		}
	}
}

// A bench's runs are drawn in the colour that the legend's mark for a
// run has, whatever the command.
func TestABenchsRunsAreTheColourOfTheLegendsMark(t *testing.T) {
	circles := regexp.MustCompile(`<path d="M[^"]*A[^"]*"\s+style="fill:(#[0-9A-F]{6})"`)
	found := circles.FindAllStringSubmatch(string(charts(t)["bench"]), -1)
	runs := 0
	for _, c := range aBench.Commands {
		runs += len(c.Energies)
	}
	if len(found) != runs+1 {
		t.Fatalf("%d filled circles, want one per run (%d) and the legend's", len(found), runs)
	}
	want := fmt.Sprintf("#%02X%02X%02X", runColor.R, runColor.G, runColor.B)
	for _, c := range found {
		if c[1] != want {
			t.Errorf("a run's point or the legend's in %s, want all in %s", c[1], want)
		}
	}
}

// Each axis of values has round ticks, at least 5, at one step of 1, 2
// or 5 times a power of ten: enough to read a value off.
func TestEveryAxisHasRoundTicksEnoughToRead(t *testing.T) {
	for name, svg := range charts(t) {
		l := layoutOf(t, svg)
		var xs, ys []float64
		for _, p := range l.placed {
			v, err := strconv.ParseFloat(p.text, 64)
			switch {
			case err != nil:
			case p.x < l.data.x0:
				ys = append(ys, v)
			case p.y < l.data.y0:
				xs = append(xs, v)
			}
		}
		axes := map[string][]float64{"power": ys}
		if !strings.HasPrefix(name, "bench") { // a bench's slots are its commands
			axes["time"] = xs
		}
		for axis, ticks := range axes {
			if !roundAndEnough(ticks) {
				t.Errorf("%s: the %s axis's ticks %v are not 5 or more at a round step", name, axis, ticks)
			}
		}
	}
}

func roundAndEnough(ticks []float64) bool {
	slices.Sort(ticks)
	ticks = slices.Compact(ticks)
	if len(ticks) < 5 {
		return false
	}
	step := ticks[1] - ticks[0]
	for i := 2; i < len(ticks); i++ {
		if math.Abs(ticks[i]-ticks[i-1]-step) > 1e-9*step {
			return false
		}
	}
	mantissa := step / math.Pow(10, math.Floor(math.Log10(step)+1e-9))
	return slices.ContainsFunc([]float64{1, 2, 5}, func(m float64) bool { return math.Abs(mantissa-m) < 1e-9 })
}

// The span is shaded where it is a part of the picture: where windows
// reach outside it by a tenth of the time drawn or more. A span over all
// of it would shade the whole picture and tell nothing.
func TestTheSpanIsShadedOnlyWhereItIsAPartOfThePicture(t *testing.T) {
	for _, tc := range []struct {
		name               string
		first, last, until float64
		want               bool
	}{
		{"windows within the span", 0, 2, 2, false},
		{"windows a little past its edges", -0.05, 2.05, 2, false},
		{"a window of 1 s past the end of 2", 0, 3, 2, true},
		{"windows from before its start", -0.5, 2, 2, true},
		{"a span past the windows' end (coverage below 1)", 0, 1, 2, false},
	} {
		if got := shaded(tc.first, tc.last, tc.until); got != tc.want {
			t.Errorf("%s: shaded %v, want %v", tc.name, got, tc.want)
		}
	}
	inside := aRun
	inside.Windows = []Window{{Start: 0, End: 0.1, Power: power.Values{Total: 4}}, {Start: 0.1, End: 0.25, Power: power.Values{Total: 6}}}
	for _, tc := range []struct {
		name  string
		p     Power
		shade bool
	}{{"a run whose windows reach well past the span", aRun, true}, {"a run whose windows are the span", inside, false}} {
		texts, _ := legendAndSeries(t, tc.p)
		var buf bytes.Buffer
		if err := WritePower(&buf, SVG, DefaultSize, tc.p); err != nil {
			t.Fatal(err)
		}
		all := strings.Join(texts, "\n")
		if got := slices.Contains(texts, SpanLegend) && strings.Contains(all, "(the shaded span)") &&
			bytes.Contains(buf.Bytes(), []byte("fill:#E8EEF8")); got != tc.shade {
			t.Errorf("%s: shaded and named so %v, want %v: %q", tc.name, got, tc.shade, texts)
		}
	}
}
