package output

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"github.com/exopower/exopower/internal/power"
	"github.com/exopower/exopower/internal/sampler"
	"github.com/exopower/exopower/internal/wire"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files")

// fakeTerminal is a terminal in memory, with a size and a TTY flag the
// test sets.
type fakeTerminal struct {
	bytes.Buffer
	width, height int
	tty           bool
	sizeErr       error
}

func (f *fakeTerminal) terminal() Terminal {
	return Terminal{Out: f, TTY: f.tty, Size: func() (int, int, error) { return f.width, f.height, f.sizeErr }}
}

var (
	testOrigin = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	testSource = wire.Source{Tool: "powermetrics", HWModel: "Mac14,14", OSBuild: "23E224"}
)

// squareWave is n one-second windows of a square wave from testOrigin,
// each with the totals after it: 7 s at 5.5 W, then 3 s at 33 W.
func squareWave(n int) ([]sampler.Window, []sampler.Totals) {
	var (
		wins []sampler.Window
		tots []sampler.Totals
		tot  sampler.Totals
	)
	for i := 0; i < n; i++ {
		p := power.Values{CPU: 4, GPU: 1, ANE: 0.5, Total: 5.5}
		if i%10 >= 7 {
			p = power.Values{CPU: 22, GPU: 9, ANE: 2, Total: 33}
		}
		w := sampler.Window{Start: testOrigin.Add(time.Duration(i) * time.Second), End: testOrigin.Add(time.Duration(i+1) * time.Second),
			Power: p, Index: i, ThermalPressure: "Nominal"}
		tot.Elapsed += time.Second
		tot.Energy = power.Values{CPU: tot.Energy.CPU + p.CPU, GPU: tot.Energy.GPU + p.GPU, ANE: tot.Energy.ANE + p.ANE, Total: tot.Energy.Total + p.Total}
		tot.Peak = tot.Peak.Max(p)
		tot.Samples++
		wins, tots = append(wins, w), append(tots, tot)
	}
	return wins, tots
}

// newTestPanel opens a panel sink on term, which must be plain or styled
// as the environment says.
func newTestPanel(t *testing.T, term *fakeTerminal, getenv func(string) string) Sink {
	t.Helper()
	s, err := NewSink(SinkConfig{Format: Panel, Terminal: term.terminal(), Getenv: getenv, Origin: testOrigin,
		Source: func() wire.Source { return testSource }})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// feed hands the sink the windows and fails the test on an error.
func feed(t *testing.T, s Sink, wins []sampler.Window, tots []sampler.Totals) {
	t.Helper()
	for i := range wins {
		if err := s.Window(wins[i], tots[i]); err != nil {
			t.Fatal(err)
		}
	}
}

// frame is one drawing of the panel as it appears on the screen: the
// bytes between the cursor going home and the erasing of the rest, with
// the erasing of each line's end taken out. It fails the test when the
// bytes are not exactly one such drawing.
func frame(t *testing.T, out string) string {
	t.Helper()
	if !strings.HasPrefix(out, home) || !strings.HasSuffix(out, eraseBelow) || strings.Count(out, home) != 1 {
		t.Fatalf("not one drawing from the top left to an erase of the rest: %q", out)
	}
	body := strings.TrimSuffix(strings.TrimPrefix(out, home), eraseBelow)
	text := strings.TrimSuffix(strings.ReplaceAll(body, eraseLine+"\n", "\n"), eraseLine)
	if want := strings.ReplaceAll(text, "\n", eraseLine+"\n") + eraseLine; body != want {
		t.Fatalf("a line does not end in exactly one erase to its end: %q", body)
	}
	return text
}

// checkFits fails the test when a drawing is wider (in the terminal's
// cells: a wide character takes two) or taller than the terminal: a
// newline on the last row would scroll it.
func checkFits(t *testing.T, text string, width, height int) {
	t.Helper()
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if n := ansi.StringWidth(l); n > width {
			t.Errorf("line %d is %d cells wide, more than %d: %q", i, n, width, l)
		}
	}
	if len(lines) > height {
		t.Errorf("%d lines, more than the terminal's %d rows: it would scroll", len(lines), height)
	}
}

// The panel after 75 windows of a square wave, so that the last minute of
// the sparkline is full, is drawn as the golden files show at each size.
func TestPanelDrawsTheGoldenFilesAtEachSize(t *testing.T) {
	wins, tots := squareWave(75)
	for _, size := range [][2]int{{80, 24}, {60, 24}, {40, 24}, {120, 24}, {80, 8}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			term := &fakeTerminal{width: size[0], height: size[1], tty: true}
			s := newTestPanel(t, term, env("NO_COLOR", "1"))
			feed(t, s, wins[:74], tots[:74])
			term.Reset()
			feed(t, s, wins[74:], tots[74:])
			got := frame(t, term.String())
			checkFits(t, got, size[0], size[1])
			golden := filepath.Join("testdata", fmt.Sprintf("panel-%dx%d.golden", size[0], size[1]))
			if *updateGolden {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to write it)", err)
			}
			if got != string(want) {
				t.Errorf("panel differs from %s:\n%s\nwant:\n%s", golden, got, want)
			}
		})
	}
}

// The panel's numbers are the totals': energy 75 windows of the wave,
// average energy over elapsed.
func TestPanelShowsTheTotalsAndTheirAverage(t *testing.T) {
	wins, tots := squareWave(75)
	p := &panel{}
	for i := range wins {
		p.add(wins[i], tots[i], testOrigin)
	}
	got := p.render(80, 24, &Styles{Plain: true})
	// 54 windows at 5.5 W, 21 at 33 W: 297 + 693 = 990 J over 75 s.
	for _, want := range []string{"\ntotal       5.500 W   990.00 J    13.20 W ", "\n peak       33.00 W ", "elapsed  0:01:15   samples 75   thermal Nominal"} {
		if !strings.Contains(got, want) {
			t.Errorf("panel lacks %q:\n%s", want, got)
		}
	}
}

// With a plug (watch --wall), the wall leads the panel: its power now,
// its energy so far, and that over the time elapsed; "n/a" for a power
// that is not fresh.
func TestPanelLeadsWithTheWall(t *testing.T) {
	wins, tots := squareWave(75)
	p := &panel{}
	for i := range wins {
		p.add(wins[i], tots[i], testOrigin)
	}
	w := wire.Num(41.5)
	p.wall = &wire.SampleWall{PowerWatts: &w, EnergyJoules: 1500}
	got := p.render(80, 24, &Styles{Plain: true})
	if want := "\nwall        41.50 W   1500.0 J    20.00 W\n"; !strings.Contains(got, want) || strings.Index(got, want) > strings.Index(got, "\ntotal ") {
		t.Errorf("panel lacks %q above the Mac's rails:\n%s", want, got)
	}
	p.wall.PowerWatts = nil
	if got := p.render(80, 24, &Styles{Plain: true}); !strings.Contains(got, "\nwall            n/a   1500.0 J") {
		t.Errorf("a stale power is not n/a:\n%s", got)
	}
}

// The wall's chart is the plug's power at each window's end, held over
// the window, and its peak the highest of those.
func TestPanelChartsTheWall(t *testing.T) {
	wins, tots := squareWave(120)
	p := &panel{}
	for i := range wins {
		w := wire.Num(10 + wins[i].Power.Total)
		p.wall = &wire.SampleWall{PowerWatts: &w, EnergyJoules: wire.Num(tots[i].Energy.Total + 10*float64(i+1))}
		p.add(wins[i], tots[i], testOrigin)
	}
	r := p.rails()[0]
	if r.name != "wall" || r.peak != 43 || r.avg != (84*5.5+36*33+10*120)/120.0 {
		t.Errorf("the first rail %q, peak %v, average %v; want wall, 43 W, 23.75 W", r.name, r.peak, r.avg)
	}
	// 120 columns of a second: the wave, 10 W up.
	vals, known := p.columns(&r, 120)
	for i, v := range vals {
		if want := 10 + wins[i].Power.Total; !known[i] || v != want {
			t.Fatalf("column %d: %v W (known %v), want %v W", i, v, known[i], want)
		}
	}
}

// Before any window the panel shows zeros, no thermal pressure and an
// empty sparkline, and names no machine.
func TestPanelBeforeAnyWindowShowsNothingMeasured(t *testing.T) {
	got := (&panel{}).render(80, 24, &Styles{Plain: true})
	for _, want := range []string{"exopower watch\n", "\ntotal       0.000 W    0.000 J    0.000 W\n", "thermal n/a"} {
		if !strings.Contains(got, want) {
			t.Errorf("panel lacks %q:\n%s", want, got)
		}
	}
}

// A chart is blank for the time before the start, and each of its
// columns is the time-weighted average of the windows it covers.
func TestChartIsBlankBeforeTheStartAndAveragesItsWindows(t *testing.T) {
	wins, tots := squareWave(30)
	p := &panel{}
	for i := range wins {
		p.add(wins[i], tots[i], testOrigin)
	}
	r := p.rails()[0]
	// 30 s of 120: the last quarter of the columns, each 10 s of the
	// wave, 7 at 5.5 W and 3 at 33 W: 13.75 W, so all one level.
	p.chart(&r, 12, 1)
	// A level line's scale is widened to 1.25 times about it.
	if want := strings.Repeat(" ", 9) + "▄▄▄"; r.chartRows[0] != want || math.Abs(r.chartLo*r.chartHi-13.75*13.75) > 1e-9 || math.Abs(r.chartHi/r.chartLo-1.25) > 1e-12 {
		t.Errorf("chart %q from %v to %v W; want %q, a scale 1.25 wide about 13.75 W", r.chartRows[0], r.chartLo, r.chartHi, want)
	}
	p.chart(&r, 48, 1)
	// 2.5 s a column: a column wholly in the low part, one across the
	// edge (2 s at 5.5 W and 0.5 s at 33 W: 11 W), two in the high one.
	if lo, hi := r.chartLo, r.chartHi; lo != 5.5 || hi != 33 {
		t.Errorf("scale %v to %v W, want 5.5 to 33", lo, hi)
	}
	vals, known := p.columns(&r, 48)
	if !known[36] || known[35] || vals[36] != 5.5 || vals[38] != (2*5.5+0.5*33)/2.5 || vals[39] != 33 {
		t.Errorf("columns 35 to 39: %v known %v; want unknown, 5.5, 5.5, 11, 33", vals[35:40], known[35:40])
	}
}

// The scale is logarithmic, from the lowest power drawn to the highest:
// an idle Mac's half a watt and its one watt read apart under a spike of
// 30 W, where a linear scale would draw both as its lowest bar.
func TestChartScaleIsLogarithmicSoIdleAndSpikeBothRead(t *testing.T) {
	p := &panel{totals: sampler.Totals{Elapsed: 2 * time.Minute, Has: power.Reported{}}}
	for i, w := range []float64{0.5, 1, 30} {
		p.history = append(p.history, step{from: time.Duration(i) * 40 * time.Second, to: time.Duration(i+1) * 40 * time.Second, v: power.Values{Total: w}})
	}
	r := p.rails()[0]
	p.chart(&r, 3, 2)
	// 16 levels over two rows; 1 W is ln 2 / ln 60 of the way up: level
	// 1 + round(15 x 0.169) = 4.
	if want := []string{"  █", "▁▄█"}; !slices.Equal(r.chartRows, want) {
		t.Errorf("chart %q, want %q", r.chartRows, want)
	}
	lines := railLines(&r, railLayout{stats: 1, chartWidth: 3, rows: 2})
	if want := []string{"total       0.000 W   █   30.00 W", " energy     0.000 J ▁▄█   0.500 W"}; !slices.Equal(lines, want) {
		t.Errorf("lines\n%q, want\n%q", lines, want)
	}
	for i := range p.history {
		p.history[i].v.Total = 16.5
	}
	if p.chart(&r, 4, 1); r.chartRows[0] != "▄▄▄▄" {
		t.Errorf("level power drawn %q, want at mid height", r.chartRows[0])
	}
	// A rail at zero floors its scale rather than stretching it.
	for i := range p.history {
		p.history[i].v.Total = 0
	}
	if p.chart(&r, 3, 1); r.chartRows[0] != "▁▁▁" {
		t.Errorf("zero power drawn %q, want the lowest bars", r.chartRows[0])
	}
}

// The panel keeps the windows of the last two minutes only.
func TestPanelForgetsWindowsOlderThanItsCharts(t *testing.T) {
	wins, tots := squareWave(200)
	p := &panel{}
	for i := range wins {
		p.add(wins[i], tots[i], testOrigin)
	}
	if n := len(p.history); n != 121 {
		t.Errorf("%d windows kept, want the 121 that reach into the last two minutes", n)
	}
}

// The panel sink enters the alternate screen when it opens and leaves it
// once, however often it is closed, and draws nothing after.
func TestPanelEntersAndLeavesTheAlternateScreenExactlyOnce(t *testing.T) {
	term := &fakeTerminal{width: 80, height: 24, tty: true}
	s := newTestPanel(t, term, env())
	if got := term.String(); !strings.HasPrefix(got, enterScreen+home) || strings.Count(got, home) != 1 {
		t.Fatalf("on open: %q, want %q and one drawing", got, enterScreen)
	}
	wins, tots := squareWave(3)
	feed(t, s, wins, tots)
	for i := 0; i < 2; i++ {
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Window(wins[0], tots[0]); err != nil {
		t.Fatal(err)
	}
	if err := s.Resize(); err != nil {
		t.Fatal(err)
	}
	out := term.String()
	if n := strings.Count(out, "\x1b[?1049h"); n != 1 {
		t.Errorf("entered the alternate screen %d times", n)
	}
	if n := strings.Count(out, "\x1b[?1049l"); n != 1 {
		t.Errorf("left the alternate screen %d times", n)
	}
	if !strings.HasPrefix(out, enterScreen+home) || !strings.HasSuffix(out, eraseBelow+leaveScreen) {
		t.Errorf("the output does not go from entering to drawing to leaving: %q", out)
	}
	if n := strings.Count(out, home); n != 4 {
		t.Errorf("%d drawings, want one on open and one per window before Close", n)
	}
}

// Every window draws the panel anew, with that window's power.
func TestPanelRedrawsOnEveryWindow(t *testing.T) {
	term := &fakeTerminal{width: 80, height: 24, tty: true}
	s := newTestPanel(t, term, env("NO_COLOR", "1"))
	wins, tots := squareWave(10)
	for i := range wins {
		term.Reset()
		feed(t, s, wins[i:i+1], tots[i:i+1])
		got := frame(t, term.String())
		want := fmt.Sprintf("elapsed  0:00:%02d   samples %d", i+1, i+1)
		if !strings.Contains(got, want) || !strings.Contains(got, fmt.Sprintf("%-8s %10s", "total", Watts(wins[i].Power.Total))) {
			t.Errorf("drawing after window %d lacks %q or its power:\n%s", i, want, got)
		}
		if !strings.HasPrefix(got, "exopower watch  Mac14,14  macOS build 23E224\n") {
			t.Errorf("drawing after window %d does not name the machine:\n%s", i, got)
		}
	}
}

// The panel asks for the source once, at the first window.
func TestPanelAsksForTheSourceOnceAtTheFirstWindow(t *testing.T) {
	term := &fakeTerminal{width: 80, height: 24, tty: true}
	asked := 0
	s, err := NewSink(SinkConfig{Format: Panel, Terminal: term.terminal(), Getenv: env("NO_COLOR", "1"), Origin: testOrigin,
		Source: func() wire.Source { asked++; return testSource }})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Resize(); err != nil {
		t.Fatal(err)
	}
	if asked != 0 {
		t.Errorf("asked for the source %d times before the first window", asked)
	}
	wins, tots := squareWave(5)
	feed(t, s, wins, tots)
	if asked != 1 {
		t.Errorf("asked for the source %d times over 5 windows, want 1", asked)
	}
}

// A source that names no tool yet is asked again at the next window.
func TestPanelAsksForTheSourceAgainWhileItIsUnknown(t *testing.T) {
	term := &fakeTerminal{width: 80, height: 24, tty: true}
	known := false
	s, err := NewSink(SinkConfig{Format: Panel, Terminal: term.terminal(), Getenv: env("NO_COLOR", "1"), Origin: testOrigin,
		Source: func() wire.Source {
			if !known {
				return wire.Source{}
			}
			return testSource
		}})
	if err != nil {
		t.Fatal(err)
	}
	wins, tots := squareWave(2)
	feed(t, s, wins[:1], tots[:1])
	known = true
	term.Reset()
	feed(t, s, wins[1:], tots[1:])
	if got := frame(t, term.String()); !strings.HasPrefix(got, "exopower watch  Mac14,14") {
		t.Errorf("the second window's drawing does not name the machine:\n%s", got)
	}
}

// A change of size redraws the panel to fit the new width and height.
func TestPanelRedrawsAtTheNewSizeOnResize(t *testing.T) {
	// 4 rails of one row at 8 rows, of 4 at 40, between 5 other lines.
	for _, size := range [][3]int{{40, 8, 8}, {20, 3, 3}, {120, 40, 21}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			term := &fakeTerminal{width: 80, height: 24, tty: true}
			s := newTestPanel(t, term, env("NO_COLOR", "1"))
			wins, tots := squareWave(75)
			feed(t, s, wins, tots)
			term.Reset()
			term.width, term.height = size[0], size[1]
			if err := s.Resize(); err != nil {
				t.Fatal(err)
			}
			got := frame(t, term.String())
			checkFits(t, got, size[0], size[1])
			lines := strings.Split(got, "\n")
			if n := size[2]; len(lines) != n {
				t.Errorf("%d lines, want %d", len(lines), n)
			}
			if utf8.RuneCountInString(lines[0]) != min(size[0], utf8.RuneCountInString("exopower watch  Mac14,14  macOS build 23E224")) {
				t.Errorf("the title is not cut to the width: %q", lines[0])
			}
		})
	}
}

// When the terminal cannot say its size, the panel takes 80x24.
func TestPanelTakes80x24WhenTheSizeIsUnknown(t *testing.T) {
	for _, tc := range []struct {
		name string
		term Terminal
	}{
		{"when the size fails", (&fakeTerminal{width: 30, height: 5, sizeErr: errors.New("not a terminal")}).terminal()},
		{"when the width is 0", (&fakeTerminal{width: 0, height: 0}).terminal()},
		{"when there is no size function", Terminal{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if w, h := tc.term.size(); w != 80 || h != 24 {
				t.Errorf("size %dx%d, want 80x24", w, h)
			}
		})
	}
	term := &fakeTerminal{sizeErr: errors.New("not a terminal"), tty: true}
	s := newTestPanel(t, term, env("NO_COLOR", "1"))
	term.Reset()
	wins, tots := squareWave(75)
	feed(t, s, wins[:1], tots[:1])
	got := frame(t, term.String())
	if lines := strings.Split(got, "\n"); len(lines) != 21 || !strings.HasSuffix(lines[2], "average last 2 min, log scale") {
		t.Errorf("not drawn at 80x24:\n%s", got)
	}
}

// The panel is plain with NO_COLOR, under CI, with TERM=dumb or off a
// terminal, and coloured on a terminal otherwise.
func TestPanelIsColouredOnlyOnATerminalThatTakesColour(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tty    bool
		getenv func(string) string
		colour bool
	}{
		{"on a 256-colour terminal", true, env("TERM", "xterm-256color"), true},
		{"on a true-colour terminal", true, env("TERM", "xterm", "COLORTERM", "truecolor"), true},
		{"with NO_COLOR", true, env("TERM", "xterm-256color", "NO_COLOR", "1"), false},
		{"under CI", true, env("TERM", "xterm-256color", "CI", "true"), false},
		{"with TERM=dumb", true, env("TERM", "dumb"), false},
		{"off a terminal", false, env("TERM", "xterm-256color"), false},
		{"with no environment", true, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			term := &fakeTerminal{width: 80, height: 24, tty: tc.tty}
			s := newTestPanel(t, term, tc.getenv)
			wins, tots := squareWave(5)
			feed(t, s, wins, tots)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if got := sgr.MatchString(term.String()); got != tc.colour {
				t.Errorf("colour escapes: %v, want %v: %q", got, tc.colour, term.String())
			}
			if tc.colour && !strings.Contains(term.String(), "\x1b[1m") {
				t.Errorf("the title is not bold: %q", term.String())
			}
		})
	}
}

// clearLines ends every line, the last included, with an erase to its
// end, and adds nothing else.
func TestClearLinesEndsEveryLineWithAnEraseToItsEnd(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "\x1b[K"},
		{"one", "one\x1b[K"},
		{"one\ntwo", "one\x1b[K\ntwo\x1b[K"},
		{"one\n\nthree", "one\x1b[K\n\x1b[K\nthree\x1b[K"},
		{"▂█\n", "▂█\x1b[K\n\x1b[K"},
	} {
		if got := clearLines(tc.in); got != tc.want {
			t.Errorf("clearLines(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// A panel that cannot write says so, from the start to the end.
func TestPanelReportsWhatItCannotWrite(t *testing.T) {
	if _, err := NewSink(SinkConfig{Format: Panel, Terminal: Terminal{Out: failWriter{}, TTY: true}}); !errors.Is(err, errWrite) {
		t.Errorf("open: %v, want %v", err, errWrite)
	}
	w := &switchWriter{}
	s, err := NewSink(SinkConfig{Format: Panel, Terminal: Terminal{Out: w, TTY: true}})
	if err != nil {
		t.Fatal(err)
	}
	w.fail = true
	wins, tots := squareWave(1)
	if err := s.Window(wins[0], tots[0]); !errors.Is(err, errWrite) {
		t.Errorf("window: %v, want %v", err, errWrite)
	}
	if err := s.Resize(); !errors.Is(err, errWrite) {
		t.Errorf("resize: %v, want %v", err, errWrite)
	}
	if err := s.Close(); !errors.Is(err, errWrite) {
		t.Errorf("close: %v, want %v", err, errWrite)
	}
}

// switchWriter writes to a buffer until fail is set.
type switchWriter struct {
	buf  bytes.Buffer
	fail bool
}

func (w *switchWriter) Write(b []byte) (int, error) {
	if w.fail {
		return 0, errWrite
	}
	return w.buf.Write(b)
}

func TestClockAndTruncateFitThePanel(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{clock(0), "0:00:00"},
		{clock(75*time.Second + 600*time.Millisecond), "0:01:16"},
		{clock(25*time.Hour + 61*time.Second), "25:01:01"},
		{truncate("abcdef", 6), "abcdef"},
		{truncate("abcdef", 4), "abc…"},
		{truncate("▂▂▂▂", 3), "▂▂…"},
		{truncate("abc", 0), "abc"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
