package plot

import (
	"bytes"
	"encoding/xml"
	"image/png"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/exopower/exopower/internal/power"
)

// three windows, the first reaching before the span, with a gap before
// the last.
var aRun = Power{
	Title: "exopower run -- make",
	Windows: []Window{
		{Start: -0.05, End: 0.05, Power: power.Values{CPU: 3, GPU: 1, ANE: 0.5, Total: 4.5}},
		{Start: 0.05, End: 0.15, Power: power.Values{CPU: 6, GPU: 4, ANE: 0, Total: 10}},
		{Start: 0.2, End: 0.3, Power: power.Values{CPU: 2, GPU: 1, ANE: 1, Total: 4}},
	},
	SpanEnd: 0.25,
	Energy:  power.Values{Total: 1.5},
	Average: power.Values{Total: 6},
}

// svgOf parses an SVG: the text it shows, and the points of each path.
func svgOf(t *testing.T, b []byte) (texts []string, paths []int) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(b))
	var inText bool
	var root string
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not valid XML: %v", err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = e.Name.Local
			}
			inText = e.Name.Local == "text"
			for _, a := range e.Attr {
				if e.Name.Local == "path" && a.Name.Local == "d" {
					paths = append(paths, strings.Count(a.Value, "M")+strings.Count(a.Value, "L"))
				}
			}
		case xml.CharData:
			if inText {
				texts = append(texts, string(e))
			}
		case xml.EndElement:
			inText = false
		}
	}
	if root != "svg" {
		t.Fatalf("the document is <%s>, not <svg>", root)
	}
	return texts, paths
}

// legendAndSeries draws p as an SVG: its texts, and how many of its
// paths are a series (two points a window; nothing else on the chart has
// as many).
func legendAndSeries(t *testing.T, p Power) (texts []string, series int) {
	t.Helper()
	var buf bytes.Buffer
	if err := WritePower(&buf, SVG, Size{Width: 800, Height: 400}, p); err != nil {
		t.Fatal(err)
	}
	texts, paths := svgOf(t, buf.Bytes())
	for _, n := range paths {
		if n == 2*len(p.Windows) {
			series++
		}
	}
	return texts, series
}

func TestAnSVGHoldsASeriesPerComponentWithTheSpansEnergy(t *testing.T) {
	texts, series := legendAndSeries(t, aRun)
	all := strings.Join(texts, "\n")
	for _, name := range Components {
		found := slices.Contains(texts, name)
		if soc := name != "system" && name != "DRAM" && name != "wall"; found != soc {
			t.Errorf("legend entry %q: %v, want %v (windows without the memory's and the system's power draw no line of them): texts %q", name, found, soc, texts)
		}
	}
	if !strings.Contains(all, "1.5 J over 0.25 s, 6 W on average") || !strings.Contains(all, "exopower run -- make") {
		t.Errorf("the title does not give the span's energy and average: %q", all)
	}
	if series != 4 {
		t.Errorf("%d series, want one per part of the SoC and the total (4)", series)
	}
}

// Windows that hold the system's and the memory's power draw them too,
// and the title leads with the system's energy, as the summary does.
func TestAnSVGDrawsTheSystemAndTheMemoryWhereTheWindowsHoldThem(t *testing.T) {
	p := aRun
	p.Windows = slices.Clone(aRun.Windows)
	for i := range p.Windows {
		p.Windows[i].Power.System, p.Windows[i].Power.DRAM = 40+float64(i), 1.25
		p.Windows[i].Has = power.Reported{CPU: true, GPU: true, ANE: true, DRAM: true, System: true}
	}
	p.Energy.System, p.Average.System = 10.25, 41
	texts, series := legendAndSeries(t, p)
	all := strings.Join(texts, "\n")
	for _, name := range Components[1:] {
		if !slices.Contains(texts, name) {
			t.Errorf("no legend entry %q in %q", name, texts)
		}
	}
	if series != len(Components)-1 || !strings.Contains(all, "system 10.25 J over 0.25 s, 41 W on average") || !strings.Contains(all, "SoC 1.5 J") {
		t.Errorf("%d series (want %d), title %q", series, len(Components)-1, all)
	}
}

// aRunAtTheWall is aRun with the plug's power in its windows.
func aRunAtTheWall() Power {
	p := aRun
	p.Windows = slices.Clone(aRun.Windows)
	for i := range p.Windows {
		p.Windows[i].Wall, p.Windows[i].HasWall = 20+float64(i), true
	}
	j := 5.5
	p.WallEnergy = &j
	return p
}

// Windows that hold the plug's power (watch --wall) draw the wall too,
// and the title leads with the wall's energy, as the summary does.
func TestAnSVGDrawsTheWallWhereTheWindowsHoldIt(t *testing.T) {
	texts, series := legendAndSeries(t, aRunAtTheWall())
	all := strings.Join(texts, "\n")
	if !slices.Contains(texts, "wall") || series != 5 || !strings.Contains(all, "wall 5.5 J, 22 W on average; 1.5 J over 0.25 s") {
		t.Errorf("%d series (want 5), texts %q", series, texts)
	}
}

func TestAPNGDecodesAtTheSizeAsked(t *testing.T) {
	for _, size := range []Size{{Width: 800, Height: 400}, {Width: 1001, Height: 333}} {
		var buf bytes.Buffer
		if err := WritePower(&buf, PNG, size, aRun); err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(&buf)
		if err != nil {
			t.Fatalf("the PNG does not decode: %v", err)
		}
		if b := img.Bounds(); b.Dx() != size.Width || b.Dy() != size.Height {
			t.Errorf("the PNG is %dx%d, want %dx%d", b.Dx(), b.Dy(), size.Width, size.Height)
		}
	}
}

func TestWhatCannotBePlottedIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		size Size
		p    Power
		want string
	}{
		{"no window", Size{800, 400}, Power{Title: "empty"}, "no window to plot"},
		{"too small", Size{10, 400}, aRun, "a plot of 10x400 pixels: each side takes 100 to 20000"},
	} {
		err := WritePower(io.Discard, SVG, tc.size, tc.p)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestTheFormatComesFromTheExtension(t *testing.T) {
	for path, want := range map[string]Format{"a.svg": SVG, "a.SVG": SVG, "d/a.png": PNG} {
		if got, err := FormatOf(path); got != want || err != nil {
			t.Errorf("%s: %q, %v; want %q", path, got, err, want)
		}
	}
	if _, err := FormatOf("a.jpg"); err == nil || !strings.Contains(err.Error(), ".svg or .png") {
		t.Errorf("a.jpg: error %v, want one that names .svg and .png", err)
	}
}
