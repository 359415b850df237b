package plot

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// box is a rectangle in the SVG's points, y upwards.
type box struct{ x0, y0, x1, y1 float64 }

func (b box) add(x, y float64) box {
	return box{min(b.x0, x), min(b.y0, y), max(b.x1, x), max(b.y1, y)}
}

var noBox = box{math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)}

// layout is where a chart's things landed: the data's area (the grid's
// extent), each text's start, and the box of each mark drawn for the
// data (not the grid, the axes and their ticks, or a background).
type layout struct {
	data  box
	texts map[string][]float64 // text -> the x of each place it starts
	// placed are the texts that are not turned, where each starts.
	placed []placed
	marks  []box
	// markStyles are the marks' styles, in the order of marks.
	markStyles []string
}

// placed is a text and the point where it starts, y upwards.
type placed struct {
	text string
	x, y float64
}

// layoutOf reads an SVG that gonum wrote: its paths' points are in points
// with y upwards (the document's transform), its texts' x where they
// start.
func layoutOf(t *testing.T, svg []byte) layout {
	t.Helper()
	l := layout{data: noBox, texts: map[string][]float64{}}
	dec := xml.NewDecoder(bytes.NewReader(svg))
	var text *placed
	rotated := 0
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
			attr := map[string]string{}
			for _, a := range e.Attr {
				attr[a.Name.Local] = a.Value
			}
			switch {
			case e.Name.Local == "g" && strings.HasPrefix(attr["transform"], "rotate"):
				rotated++
			case e.Name.Local == "text" && rotated == 0:
				x, _ := strconv.ParseFloat(attr["x"], 64)
				y, _ := strconv.ParseFloat(attr["y"], 64)
				text = &placed{x: x, y: -y} // drawn turned upside down
			case e.Name.Local == "path":
				l.addPath(attr["d"], attr["style"])
			}
		case xml.CharData:
			if text != nil {
				text.text = string(e)
				l.texts[text.text] = append(l.texts[text.text], text.x)
				l.placed = append(l.placed, *text)
				text = nil
			}
		case xml.EndElement:
			if e.Name.Local == "g" && rotated > 0 {
				rotated--
			}
		}
	}
	if l.data == noBox {
		t.Fatal("no grid in the SVG: the data's area is unknown")
	}
	return l
}

func (l *layout) addPath(d, style string) {
	b := noBox
	fields := strings.FieldsFunc(d, func(r rune) bool { return r == ',' || r == ' ' })
	var cmd byte
	var args []float64
	flush := func() {
		switch {
		case cmd == 'A' && len(args) == 7: // an arc: its end, and its radius about it
			r := args[0]
			b = b.add(args[5], args[6]-r).add(args[5], args[6]+r)
		case (cmd == 'M' || cmd == 'L') && len(args) == 2:
			b = b.add(args[0], args[1])
		}
		args = args[:0]
	}
	for _, f := range fields {
		for f != "" {
			if c := f[0]; c >= 'A' && c <= 'Z' {
				flush()
				cmd, f = c, f[1:]
				continue
			}
			end := strings.IndexAny(f[1:], "MLAZ") + 1
			if end == 0 {
				end = len(f)
			}
			x, err := strconv.ParseFloat(f[:end], 64)
			if err == nil {
				args = append(args, x)
			}
			f = f[end:]
			if (cmd == 'M' || cmd == 'L') && len(args) == 2 || cmd == 'A' && len(args) == 7 {
				flush()
			}
		}
	}
	flush()
	switch {
	case b == noBox:
	case strings.Contains(style, "stroke:#808080"): // the grid spans the data's area
		l.data = l.data.add(b.x0, b.y0).add(b.x1, b.y1)
	case style == "fill:none;stroke:#000000;stroke-width:0.5", strings.Contains(style, "fill:#FFFFFF"), strings.Contains(style, "fill:#E8EEF8"):
		// an axis, a tick, the background, the span's shade
	default:
		l.marks = append(l.marks, b)
		l.markStyles = append(l.markStyles, style)
	}
}

// charts are a picture of each kind, as SVG.
func charts(t *testing.T) map[string][]byte {
	t.Helper()
	return chartsAt(t, Size{Width: 800, Height: 400})
}

// chartsAt are a picture of each kind, as SVG, size big. With -pictures
// DIR they are written there, as SVG and as PNG, to be looked at.
func chartsAt(t *testing.T, size Size) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for name, write := range map[string]func(io.Writer, Format) error{
		"bench":      func(w io.Writer, f Format) error { return WriteBench(w, f, size, aBench) },
		"bench-wall": func(w io.Writer, f Format) error { return WriteBench(w, f, size, aBenchAtTheWall) },
		"power":      func(w io.Writer, f Format) error { return WritePower(w, f, size, aRun) },
		"power-wall": func(w io.Writer, f Format) error { return WritePower(w, f, size, aRunAtTheWall()) },
		"nodes":      func(w io.Writer, f Format) error { return WriteNodes(w, f, size, nodes) },
		"llm":        func(w io.Writer, f Format) error { return WritePhases(w, f, size, twelveAtFour()) },
		"llm-wall":   func(w io.Writer, f Format) error { return WritePhases(w, f, size, oneMacAtTheWall()) },
	} {
		var buf bytes.Buffer
		if err := write(&buf, SVG); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = buf.Bytes()
		if *pictures == "" {
			continue
		}
		var png bytes.Buffer
		if err := write(&png, PNG); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for ext, b := range map[string][]byte{"svg": buf.Bytes(), "png": png.Bytes()} {
			path := filepath.Join(*pictures, fmt.Sprintf("%s-%dx%d.%s", name, size.Width, size.Height, ext))
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return out
}

// A legend stands beside the data, in a column of its own: drawn over
// it, as gonum draws it, an entry hides the points and lines under it.
func TestALegendStandsBesideTheData(t *testing.T) {
	entries := map[string][]string{"bench": {IdleLegend, RunLegend}, "power": {"total", "CPU", "ANE"}, "nodes": {"ten", "twenty", TotalName},
		"bench-wall": {IdleLegend, RunLegend, IdleWallLegend, WallRunLegend}, "power-wall": {"wall", "total"},
		"llm":      {"mac1 (10.0.0.5:10241)", TotalName, PrefillLegend, DecodeLegend, FailedLegend},
		"llm-wall": {WallName, "mac1 (10.0.0.5:10241)", PrefillLegend, DecodeLegend}}
	for name, svg := range charts(t) {
		l := layoutOf(t, svg)
		for _, e := range entries[name] {
			xs := l.texts[e]
			if len(xs) == 0 {
				t.Errorf("%s: no legend entry %q", name, e)
			}
			for _, x := range xs {
				if x < l.data.x1 {
					t.Errorf("%s: the legend's %q starts at x %.1f, over the data, which reach x %.1f", name, e, x, l.data.x1)
				}
			}
		}
	}
}

// Nothing drawn for the data touches the frame: the ranges leave room
// beyond the highest run and its whisker, and beyond the first and the
// last window, and a power of 0 is not drawn on the axis.
func TestNothingDrawnTouchesTheFrame(t *testing.T) {
	for name, svg := range charts(t) {
		l := layoutOf(t, svg)
		room := 0.01 * min(l.data.x1-l.data.x0, l.data.y1-l.data.y0)
		for _, m := range l.marks {
			if m.x0 >= l.data.x1 {
				continue // the legend's, beside the data
			}
			if m.x0 < l.data.x0+room || m.x1 > l.data.x1-room || m.y0 < l.data.y0+room || m.y1 > l.data.y1-room {
				t.Errorf("%s: a mark over x %.1f to %.1f, y %.1f to %.1f, within %.1f of the data's frame, x %.1f to %.1f, y %.1f to %.1f",
					name, m.x0, m.x1, m.y0, m.y1, room, l.data.x0, l.data.x1, l.data.y0, l.data.y1)
			}
		}
		if len(l.marks) == 0 {
			t.Errorf("%s: no mark found", name)
		}
	}
}
