package output

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/exopower/exopower/internal/apps"
	"github.com/exopower/exopower/internal/power"
	"github.com/exopower/exopower/internal/wire"
)

// Render draws top's screen of s to fit width x height, without a final
// newline: the Mac's figures and how the apps and the rest add up to
// them, the list of apps, and the keys, which stay on the last row at
// every size.
func (v *AppsView) Render(s *apps.Snapshot, src wire.Source, width, height int, st *Styles) string {
	height = max(height, 1)
	sum, parts := topHeader(s, src, v.Paused)
	sum[0].style = &st.Title
	l := layoutList(width)
	list := v.sorted(s.Apps)
	v.layout(list, len(s.Apps)+1)
	// The rails', rest's, processes' and notes' lines go, the last
	// first, while the list would have fewer than five rows shown.
	want := min(len(v.rows), 5)
	for len(parts) > 0 && height-len(sum)-len(parts)-2 < want {
		parts = parts[:len(parts)-1]
	}
	head := append(sum, parts...)
	rowsShown := max(height-len(head)-2, 0)
	v.layout(list, max(rowsShown, 1))
	lines := append(head, panelLine{l.head(), &st.Label})
	for i := v.offset; i < min(v.offset+rowsShown, len(v.rows)); i++ {
		r := v.rows[i]
		var style *lipgloss.Style
		if i == v.cursor {
			style = &st.Total
		}
		lines = append(lines, panelLine{r.text(l, i == v.cursor, v.open[r.app.Name]), style})
	}
	for len(lines) < height-1 {
		lines = append(lines, panelLine{})
	}
	lines = append(lines[:min(len(lines), height-1)], panelLine{v.footer(len(list), len(s.Apps)), &st.Label})
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		text := cutWhole(l.text, width)
		if l.style != nil {
			text = st.Render(*l.style, text)
		}
		out = append(out, text)
	}
	return strings.Join(out, "\n")
}

// cutWhole cuts a line to width terminal cells between its parts, so
// that no figure is cut in half ("rest 18…" would read as 18 W): at two
// spaces, between a figure and the next, where that keeps two thirds of
// the width, else at a space. "…" says what was cut.
func cutWhole(s string, width int) string {
	if width <= 0 || ansi.StringWidth(s) <= width {
		return s
	}
	for _, sep := range []string{"  ", " "} {
		for i := strings.LastIndex(s, sep); i > 0; i = strings.LastIndex(s[:i], sep) {
			head := strings.TrimRight(s[:i], " ")
			if w := ansi.StringWidth(head); w+2 <= width {
				if sep == " " || 3*w >= 2*width {
					return head + " …"
				}
				break
			}
		}
	}
	return fitLine(s, width)
}

// fitLine cuts a line to width terminal cells.
func fitLine(s string, width int) string {
	if width <= 0 || ansi.StringWidth(s) <= width {
		return s
	}
	return ansi.Truncate(s, width, "…")
}

// topHeader is the lines above the list: the title and the Mac's power
// as the apps' and the rest's sum, now and since the start (sum); the
// rails (and the wall), the rest's parts, the processes read and not,
// and the notes (parts, which a small terminal gives up, the last
// first).
func topHeader(s *apps.Snapshot, src wire.Source, paused bool) (sum, parts []panelLine) {
	title := "exopower top"
	if src.HWModel != "" {
		title += "  " + src.HWModel
	}
	if !s.Since.IsZero() {
		title += "  " + clock(s.End.Sub(s.Since))
	}
	if paused {
		title += "  PAUSED (space goes on; the energy is counted meanwhile)"
	}
	var appsNow, appsEnergy float64
	for _, a := range s.Apps {
		appsNow += a.Power.Total()
		appsEnergy += a.Energy.Total()
	}
	scope := "SoC"
	if s.Scope == "system" {
		scope = "Mac"
	}
	sum = []panelLine{
		{text: title},
		{text: fmt.Sprintf("%-8s %s %s  =  apps %s  +  rest %s", "now", scope, Watts(s.Mac.Whole(s.Mac.Power)), Watts(appsNow), Watts(s.Rest.Power.Total))},
		{text: fmt.Sprintf("%-8s %s %s  =  apps %s  +  forgotten %s  +  rest %s", "energy", scope, Joules(s.Mac.Whole(s.Mac.Energy)),
			Joules(appsEnergy), Joules(s.Forgotten.Total()), Joules(s.Rest.Energy.Total))},
	}
	parts = []panelLine{{text: "rails    " + railsText(*s)}, {text: screenRestText(s.Rest.Power, s.Mac.Has, s.Scope)}, {text: processesText(s)}}
	for _, n := range appsNotes(*s) {
		parts = append(parts, panelLine{text: "note     " + n})
	}
	return sum, parts
}

// screenRestText is the rest now, by part: what no process read holds.
func screenRestText(r apps.RestFigures, has power.Reported, scope string) string {
	line := fmt.Sprintf("%-8s CPU %s   GPU %s   ANE %s", "rest", Watts(r.CPU), Watts(r.GPU), Watts(r.ANE))
	if has.DRAM && scope == "system" {
		line += "   DRAM " + Watts(r.DRAM)
	}
	if scope == "system" {
		line += "   rest of the Mac " + Watts(r.System)
	}
	return line
}

// processesText counts the processes read and not: the notes say why.
func processesText(s *apps.Snapshot) string {
	c := s.Processes
	line := fmt.Sprintf("%-8s %d listed, %d read", "procs", c.Listed, c.Read)
	if s.AllUsers {
		line += " (every user's)"
	}
	if c.NotReadable > 0 {
		line += fmt.Sprintf(", %d not read", c.NotReadable)
	}
	return line
}

// footer says the order and the filter, then the keys, the ones most
// needed first (a narrow terminal cuts the line's end).
func (v *AppsView) footer(shown, all int) string {
	if v.Typing {
		return fmt.Sprintf("filter: %s_   (Enter keeps it, Esc drops it)", v.Filter)
	}
	state := "sort " + sortNames[v.Sort]
	if v.Filter != "" {
		state += fmt.Sprintf(", filter %q: %d of %d apps", v.Filter, shown, all)
	}
	if v.NoKeys {
		return state + "   Ctrl-C to stop"
	}
	return state + "   q quit  tab rails  / filter  p e c g n sort  ⏎ open  space pause"
}
