package output

import (
	"io"
	"strconv"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// Styles colour text for a terminal. With Plain set, Render leaves text
// as it is: &Styles{Plain: true} suits files and pipes.
type Styles struct {
	// Plain is true with NO_COLOR, under CI, with TERM=dumb, or when the
	// output is not a terminal.
	Plain bool
	// Title heads a summary or the panel; Label names a row; Value is a
	// number; Total is the number that matters most (and "ok" in a
	// check); Warn is a warning (and "FAIL").
	Title, Label, Value, Total, Warn lipgloss.Style
}

// NewStyles returns the styles for text written to w. tty says whether w
// is a terminal; getenv reads the environment (NO_COLOR, CI, TERM,
// COLORFGBG and what lipgloss reads to choose its colours); nil reads as
// an empty environment. It never asks the terminal anything.
func NewStyles(w io.Writer, tty bool, getenv func(string) string) *Styles {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	st := &Styles{Plain: !tty || getenv("NO_COLOR") != "" || getenv("CI") != "" || getenv("TERM") == "dumb"}
	if st.Plain {
		return st
	}
	// The renderer reads the environment through getenv, not the
	// process's own, and takes w for a terminal as the caller says.
	r := lipgloss.NewRenderer(w, termenv.WithTTY(true), termenv.WithEnvironment(environ(getenv)))
	// Left to itself, the renderer asks a terminal on w for its
	// background (OSC 11 and a cursor-position report) and waits up to
	// 5 s for an answer that many terminals never send: the first frame
	// and Ctrl-C would wait with it. The background is settled here.
	dark, known := darkBackground(getenv("COLORFGBG"))
	r.SetHasDarkBackground(dark || !known)
	// Without COLORFGBG, the 16 colours of the terminal's own palette,
	// which its theme sets to read on its background: magenta and bright
	// red read on the default black and white ones of common terminals.
	total, warn := lipgloss.Color("5"), lipgloss.Color("9")
	switch {
	case known && dark:
		total, warn = "#5fd7ff", "#ffaf00"
	case known:
		total, warn = "#005f87", "#af5f00"
	}
	st.Title = r.NewStyle().Bold(true)
	st.Label = r.NewStyle().Faint(true)
	st.Value = r.NewStyle()
	st.Total = r.NewStyle().Bold(true).Foreground(total)
	st.Warn = r.NewStyle().Foreground(warn)
	return st
}

// darkBackground reads the terminal's background from COLORFGBG, which
// rxvt, iTerm2, Konsole and others set to the palette numbers of the
// foreground and background: "15;0" is white on black. Its last field is
// the background ("default" says nothing); dark is as termenv would take
// the colour.
func darkBackground(colorfgbg string) (dark, known bool) {
	f := strings.Split(colorfgbg, ";")
	n, err := strconv.Atoi(f[len(f)-1])
	if len(f) < 2 || err != nil || n < 0 || n > 255 {
		return false, false
	}
	var c termenv.Color = termenv.ANSI256Color(n)
	if n < 16 {
		c = termenv.ANSIColor(n)
	}
	_, _, l := termenv.ConvertToRGB(c).Hsl()
	return l < 0.5, true
}

// Render styles text with s, unless the styles are plain.
func (st *Styles) Render(s lipgloss.Style, text string) string {
	if st.Plain {
		return text
	}
	return s.Render(text)
}

// environ is getenv as termenv asks for the environment.
type environ func(string) string

func (e environ) Getenv(key string) string { return e(key) }

// Environ is not asked for by termenv; getenv cannot list the variables.
func (e environ) Environ() []string { return nil }
