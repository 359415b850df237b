package output

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/testfiles"
)

// endOfDrawing ends what the helper draws on its terminal.
const endOfDrawing = "-- end of drawing --"

// Queries a terminal answers on its input: its background colour (OSC
// 11), its foreground (OSC 10) and the cursor's position. One that does
// not answer them leaves a program that asks waiting: termenv gives up
// after 5 s, and the panel's first frame and Ctrl-C wait with it.
var terminalQueries = []string{"\x1b]11;?", "\x1b]10;?", "\x1b[6n"}

// The styles, a summary's colours and the panel's first frame are drawn
// on a real terminal (a pseudo-terminal, made the helper's controlling
// terminal, as a shell's is) that answers nothing: nothing asks it
// anything, and the frame is there, in colour, once the first window is.
func TestStylesNeverQueryTheTerminal(t *testing.T) {
	controller, term := testfiles.OpenPTY(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperDrawOnATerminal$")
	cmd.Env = append(os.Environ(), "EXOPOWER_DRAW_ON_TERMINAL=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = term, term, term
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	term.Close() // the helper holds it now: a read ends when it exits
	drawn := make(chan string, 1)
	go func() { drawn <- readUntil(controller, endOfDrawing) }()
	var out string
	select {
	case out = <-drawn:
	case <-time.After(time.Minute): // a guard against a hang, no limit on speed
		cmd.Process.Kill()
		out = <-drawn
		t.Errorf("the helper never finished drawing")
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("the helper: %v", err)
	}
	for _, q := range terminalQueries {
		if strings.Contains(out, q) {
			t.Errorf("the terminal was asked %q:\n%q", q, out)
		}
	}
	if !strings.Contains(out, "Ctrl-C to stop") || !strings.Contains(out, endOfDrawing) {
		t.Errorf("no panel drawn at the first window:\n%q", out)
	}
	if !sgr.MatchString(out) {
		t.Errorf("no colours on a 256-colour terminal:\n%q", out)
	}
}

// readUntil reads from r until what was read holds end, or r ends.
func readUntil(r *os.File, end string) string {
	var b bytes.Buffer
	buf := make([]byte, 4096)
	for !strings.Contains(b.String(), end) {
		n, err := r.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return b.String()
}

// TestHelperDrawOnATerminal is the helper of TestStylesNeverQueryTheTerminal:
// it draws on its standard output, its controlling terminal.
func TestHelperDrawOnATerminal(t *testing.T) {
	if os.Getenv("EXOPOWER_DRAW_ON_TERMINAL") == "" {
		t.Skip("a helper, run by TestStylesNeverQueryTheTerminal")
	}
	getenv := env("TERM", "xterm-256color")
	st := NewStyles(os.Stdout, true, getenv)
	fmt.Println(st.Render(st.Total, "12.5 J"), st.Render(st.Warn, "a warning"))
	s, err := NewSink(SinkConfig{Format: Panel, Terminal: Terminal{Out: os.Stdout, TTY: true}, Getenv: getenv, Origin: testOrigin})
	if err != nil {
		t.Fatal(err)
	}
	wins, tots := squareWave(1)
	if err := s.Window(wins[0], tots[0]); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	fmt.Println(endOfDrawing)
}

// The background is read from COLORFGBG where the terminal sets it;
// otherwise the colours are the terminal's own palette, which its theme
// fits to its background.
func TestStylesTakeTheBackgroundFromCOLORFGBG(t *testing.T) {
	for _, tc := range []struct {
		name, colorfgbg, total, warn string
	}{
		{"white on black is dark", "15;0", "1;38;5;81", "38;5;214"},
		{"grey on black, with rxvt's middle field, is dark", "7;default;0", "1;38;5;81", "38;5;214"},
		{"black on white is light", "0;15", "1;38;5;24", "38;5;130"},
		{"black on light grey is light", "0;7", "1;38;5;24", "38;5;130"},
		{"no COLORFGBG takes the palette", "", "1;35", "91"},
		{"a default background takes the palette", "default;default", "1;35", "91"},
		{"nonsense takes the palette", "white on black", "1;35", "91"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			st := NewStyles(&b, true, env("TERM", "xterm-256color", "COLORFGBG", tc.colorfgbg))
			total, warn := st.Render(st.Total, "t"), st.Render(st.Warn, "w")
			if want := "\x1b[" + tc.total + "mt\x1b[0m"; total != want {
				t.Errorf("total %q, want %q", total, want)
			}
			if want := "\x1b[" + tc.warn + "mw\x1b[0m"; warn != want {
				t.Errorf("warning %q, want %q", warn, want)
			}
		})
	}
}
