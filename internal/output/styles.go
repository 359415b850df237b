package output

import (
	"io"

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
// is a terminal; getenv reads the environment (NO_COLOR, CI, TERM and
// what lipgloss reads to choose its colours); nil reads as an empty
// environment.
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
	st.Title = r.NewStyle().Bold(true)
	st.Label = r.NewStyle().Faint(true)
	st.Value = r.NewStyle()
	st.Total = r.NewStyle().Bold(true).Foreground(lipgloss.AdaptiveColor{Light: "#005f87", Dark: "#5fd7ff"})
	st.Warn = r.NewStyle().Foreground(lipgloss.AdaptiveColor{Light: "#af5f00", Dark: "#ffaf00"})
	return st
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
