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
// them, the list of apps, and the keys.
func (v *AppsView) Render(s *apps.Snapshot, src wire.Source, width, height int, st *Styles) string {
	head := topHeader(s, src, v.Paused)
	if height < len(head)+4 {
		// A small terminal keeps the title and the sum: the list
		// matters more than the parts.
		head = head[:2]
	}
	name := listNameWidth(width)
	list := v.sorted(s.Apps)
	rowsShown := max(height-len(head)-2, 1)
	v.layout(list, rowsShown)
	lines := append(head, panelLine{listHead(name), &st.Label})
	for i := v.offset; i < min(v.offset+rowsShown, len(v.rows)); i++ {
		r := v.rows[i]
		var style *lipgloss.Style
		if i == v.cursor {
			style = &st.Total
		}
		lines = append(lines, panelLine{r.text(name, i == v.cursor, v.open[r.app.Name]), style})
	}
	for len(lines) < height-1 {
		lines = append(lines, panelLine{})
	}
	lines = append(lines, panelLine{v.footer(len(list), len(s.Apps)), &st.Label})
	out := make([]string, 0, len(lines))
	for _, l := range lines[:min(len(lines), max(height, 1))] {
		text := fitLine(l.text, width)
		if l.style != nil {
			text = st.Render(*l.style, text)
		}
		out = append(out, text)
	}
	return strings.Join(out, "\n")
}

// fitLine cuts a line to width terminal cells.
func fitLine(s string, width int) string {
	if width <= 0 || ansi.StringWidth(s) <= width {
		return s
	}
	return ansi.Truncate(s, width, "…")
}

// topHeader is the lines above the list: the title; the Mac's power as
// the apps' and the rest's sum, now and since the start; the wall; the
// rails; the rest's parts; the processes read and not.
func topHeader(s *apps.Snapshot, src wire.Source, paused bool) []panelLine {
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
	lines := []panelLine{
		{text: title},
		{text: fmt.Sprintf("%-8s %s %s  =  apps %s  +  rest %s", "now", scope, Watts(s.Mac.Whole(s.Mac.Power)), Watts(appsNow), Watts(s.Rest.Power.Total))},
		{text: fmt.Sprintf("%-8s %s %s  =  apps %s  +  forgotten %s  +  rest %s", "energy", scope, Joules(s.Mac.Whole(s.Mac.Energy)),
			Joules(appsEnergy), Joules(s.Forgotten.Total()), Joules(s.Rest.Energy.Total))},
	}
	lines = append(lines, panelLine{text: "rails    " + railsText(*s)}, panelLine{text: screenRestText(s.Rest.Power, s.Mac.Has, s.Scope)},
		panelLine{text: processesText(s)})
	for _, n := range appsNotes(*s) {
		lines = append(lines, panelLine{text: "note     " + n})
	}
	return lines
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

// footer says the order, the filter and the keys.
func (v *AppsView) footer(shown, all int) string {
	if v.Typing {
		return fmt.Sprintf("filter: %s_   (Enter keeps it, Esc drops it)", v.Filter)
	}
	state := "sort " + sortNames[v.Sort]
	if v.Filter != "" {
		state += fmt.Sprintf(", filter %q: %d of %d apps", v.Filter, shown, all)
	}
	return state + "   p e c g n sort  / filter  ↑↓ ⏎ open  space pause  tab rails  q quit"
}
