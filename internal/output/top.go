package output

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/exopower/exopower/internal/apps"
	"github.com/exopower/exopower/internal/keys"
)

// SortKey is what the apps are ordered by, highest first (a name A to
// Z).
type SortKey int

// The orders of the apps, each on its own key.
const (
	ByPower SortKey = iota
	ByEnergy
	ByCPU
	ByGPU
	ByName
)

var sortNames = [...]string{"power", "energy", "CPU", "GPU", "name"}

// sortKeys are the keys that choose each order.
var sortKeys = map[rune]SortKey{'p': ByPower, 'e': ByEnergy, 'c': ByCPU, 'g': ByGPU, 'n': ByName}

// AppsView is the state of top's screen that the keys change: the order,
// the filter, the row the cursor is on, the apps opened into their
// processes, and whether it is paused. Its zero value sorts by power.
type AppsView struct {
	Sort SortKey
	// Filter keeps the apps whose name, or one of whose processes'
	// names, holds it, in any case; Typing says the filter is being
	// typed, and takes the keys.
	Filter string
	Typing bool
	// Paused keeps the screen on one snapshot; the energy is still
	// counted meanwhile.
	Paused bool
	// NoKeys says no keys are read (there is no terminal to read them
	// from): the footer says Ctrl-C alone.
	NoKeys bool
	// cursor is the row it is on, offset the first row shown; open
	// holds the apps shown with their processes. at is what the
	// cursor is on, which it follows as the apps change places at each
	// refresh: a row under the cursor that went to another app would
	// open the wrong one.
	cursor, offset int
	at             rowID
	open           map[string]bool
	rows           []appRow // the rows of the last drawing
	page           int      // how many of them it showed
}

// rowID is an app's row (pid 0), or that of one of its processes.
type rowID struct {
	app string
	pid int32
}

func (r appRow) id() rowID {
	if r.proc != nil {
		return rowID{r.app.Name, r.proc.Pid}
	}
	return rowID{app: r.app.Name}
}

// Action is what a key asks of the view's owner.
type Action int

// The actions.
const (
	// Redraw: the view changed; draw it again.
	Redraw Action = iota
	// Ignore: nothing changed.
	Ignore
	// Quit ends the view.
	Quit
	// SwitchView goes to the other view (watch's rails, top's apps).
	SwitchView
)

// Key takes one key.
func (v *AppsView) Key(k keys.Key) Action {
	a := v.key(k)
	if v.cursor >= 0 && v.cursor < len(v.rows) {
		v.at = v.rows[v.cursor].id()
	}
	return a
}

func (v *AppsView) key(k keys.Key) Action {
	if v.Typing {
		return v.typeKey(k)
	}
	switch k.Name {
	case keys.Up:
		v.move(-1)
	case keys.Down:
		v.move(1)
	case keys.PageUp:
		v.move(-v.page)
	case keys.PageDown:
		v.move(v.page)
	case keys.Home:
		v.move(-len(v.rows))
	case keys.End:
		v.move(len(v.rows))
	case keys.Enter, keys.Right, keys.Left:
		v.toggle(k.Name)
	case keys.Tab:
		return SwitchView
	case keys.Escape:
		v.Filter = ""
	case keys.None:
		return v.runeKey(k.Rune)
	default:
		return Ignore
	}
	return Redraw
}

func (v *AppsView) runeKey(r rune) Action {
	if s, ok := sortKeys[r]; ok {
		v.Sort = s
		return Redraw
	}
	switch r {
	case 'q', 'Q':
		return Quit
	case '/':
		v.Typing = true
	case ' ':
		v.Paused = !v.Paused
	default:
		return Ignore
	}
	return Redraw
}

// move moves the cursor by n rows, within the list.
func (v *AppsView) move(n int) { v.cursor = max(min(v.cursor+n, len(v.rows)-1), 0) }

// typeKey takes a key of the filter being typed: Enter keeps it, Escape
// drops it.
func (v *AppsView) typeKey(k keys.Key) Action {
	switch k.Name {
	case keys.Enter:
		v.Typing = false
	case keys.Escape:
		v.Typing, v.Filter = false, ""
	case keys.Backspace:
		if r := []rune(v.Filter); len(r) > 0 {
			v.Filter = string(r[:len(r)-1])
		}
	case keys.None:
		if len(v.Filter) < 64 {
			v.Filter += string(k.Rune)
		}
	default:
		return Ignore
	}
	v.cursor = 0
	return Redraw
}

// toggle opens the app under the cursor into its processes (Enter, →)
// or closes it (Enter, ←), from its row or one of its processes'.
func (v *AppsView) toggle(k keys.Name) {
	if v.cursor < 0 || v.cursor >= len(v.rows) {
		return
	}
	name := v.rows[v.cursor].app.Name
	if v.open == nil {
		v.open = map[string]bool{}
	}
	switch open := v.open[name]; {
	case k == keys.Right && !open, k == keys.Enter && !open:
		v.open[name] = true
	case k == keys.Left && open, k == keys.Enter && open:
		delete(v.open, name)
		for v.cursor > 0 && v.rows[v.cursor].proc != nil {
			v.cursor--
		}
	}
}

// appRow is a row of the list: an app, or one of its processes under it.
type appRow struct {
	app  *apps.App
	proc *apps.Process
}

// sorted are the apps the filter keeps, in the view's order.
func (v *AppsView) sorted(all []apps.App) []apps.App {
	f := strings.ToLower(v.Filter)
	out := make([]apps.App, 0, len(all))
	for _, a := range all {
		if f == "" || v.matches(&a, f) {
			out = append(out, a)
		}
	}
	key := func(x *apps.App) float64 {
		switch v.Sort {
		case ByEnergy:
			return x.Energy.Total()
		case ByCPU:
			return x.Power.CPU
		case ByGPU:
			return x.Power.GPU
		}
		return x.Power.Total()
	}
	slices.SortStableFunc(out, func(x, y apps.App) int {
		if v.Sort == ByName {
			return cmp.Compare(strings.ToLower(x.Name), strings.ToLower(y.Name))
		}
		return cmp.Compare(key(&y), key(&x))
	})
	return out
}

func (v *AppsView) matches(a *apps.App, f string) bool {
	if strings.Contains(strings.ToLower(a.Name), f) {
		return true
	}
	for _, p := range a.Processes {
		if strings.Contains(strings.ToLower(p.Name), f) {
			return true
		}
	}
	return false
}

// layout makes the rows of the list, and keeps the cursor on one of them
// and in the height shown.
func (v *AppsView) layout(list []apps.App, height int) {
	v.rows = v.rows[:0]
	for i := range list {
		a := &list[i]
		v.rows = append(v.rows, appRow{app: a})
		if v.open[a.Name] {
			for j := range a.Processes {
				v.rows = append(v.rows, appRow{app: a, proc: &a.Processes[j]})
			}
		}
	}
	for i, r := range v.rows {
		if r.id() == v.at {
			v.cursor = i
			break
		}
	}
	v.cursor = max(min(v.cursor, len(v.rows)-1), 0)
	if len(v.rows) > 0 {
		v.at = v.rows[v.cursor].id()
	}
	height = max(height, 1)
	v.page = height
	if v.cursor < v.offset {
		v.offset = v.cursor
	}
	if v.cursor >= v.offset+height {
		v.offset = v.cursor - height + 1
	}
	v.offset = max(min(v.offset, len(v.rows)-height), 0)
}

// The list's row head is the cursor's mark and an app's opened or
// closed mark; a name takes what the figures leave, between minName and
// maxName cells (wider, the figures would stand far from their names).
const (
	markWidth = 3
	minName   = 12
	maxName   = 48
)

// listColumn is a column of figures: its head, its width, and its cell
// of an app and of a process.
type listColumn struct {
	head  string
	width int
	app   func(a *apps.App) string
	proc  func(p *apps.Process) string
}

// listColumns are the figures, in their order on the screen; a narrow
// terminal gives up the last of dropOrder first, whole (a number cut in
// half misleads).
var listColumns = []listColumn{
	{"POWER", 10, func(a *apps.App) string { return Watts(a.Power.Total()) }, func(p *apps.Process) string { return Watts(p.Power.Total()) }},
	{"CPU", 10, func(a *apps.App) string {
		if a.NotReadable > 0 && a.NotReadable == len(a.Processes) {
			return "unread"
		}
		return Watts(a.Power.CPU)
	}, func(p *apps.Process) string {
		if !p.Readable {
			return "unread"
		}
		return Watts(p.Power.CPU)
	}},
	{"GPU", 10, func(a *apps.App) string { return Watts(a.Power.GPU) }, func(p *apps.Process) string { return Watts(p.Power.GPU) }},
	{"ENERGY", 10, func(a *apps.App) string { return Joules(a.Energy.Total()) }, func(p *apps.Process) string { return Joules(p.Energy.Total()) }},
	{"PROCS", 6, func(a *apps.App) string {
		if a.Gone {
			return "gone"
		}
		return fmt.Sprint(len(a.Processes))
	}, func(*apps.Process) string { return "" }},
}

// dropOrder is the columns' indexes, the first given up first.
var dropOrder = []int{4, 2, 1, 3}

// listLayout is the list's columns that fit width, and the names' width.
type listLayout struct {
	name int
	cols []listColumn
}

func layoutList(width int) listLayout {
	shown := make([]bool, len(listColumns))
	used := markWidth + minName
	for i, c := range listColumns {
		shown[i], used = true, used+c.width+1
	}
	for _, i := range dropOrder {
		if used <= width {
			break
		}
		shown[i], used = false, used-listColumns[i].width-1
	}
	var l listLayout
	for i, c := range listColumns {
		if shown[i] {
			l.cols = append(l.cols, c)
		}
	}
	l.name = min(max(minName+width-used, minName), maxName)
	return l
}

// head is the head of the list's columns.
func (l listLayout) head() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%*s%-*s", markWidth, "", l.name, "APP")
	for _, c := range l.cols {
		fmt.Fprintf(&b, " %*s", c.width, c.head)
	}
	return b.String()
}

// text is a row of the list: an app with its figures; a process under it
// indented, with its pid. at marks the cursor's row, open an app shown
// with its processes.
func (r appRow) text(l listLayout, at, open bool) string {
	var b strings.Builder
	b.WriteString(map[bool]string{true: ">", false: " "}[at])
	switch {
	case r.proc != nil:
		b.WriteString("  " + fit(fmt.Sprintf("  %d %s", r.proc.Pid, r.proc.Name), l.name))
	case len(r.app.Processes) == 0:
		b.WriteString("  " + fit(r.app.Name, l.name))
	case open:
		b.WriteString("▾ " + fit(r.app.Name, l.name))
	default:
		b.WriteString("▸ " + fit(r.app.Name, l.name))
	}
	for _, c := range l.cols {
		cell := ""
		if r.proc != nil {
			cell = c.proc(r.proc)
		} else {
			cell = c.app(r.app)
		}
		fmt.Fprintf(&b, " %*s", c.width, cell)
	}
	return strings.TrimRight(b.String(), " ")
}

// fit pads or cuts s to width terminal cells: a name may hold wide
// characters, which a count of runes would misplace.
func fit(s string, width int) string {
	if w := ansi.StringWidth(s); w <= width {
		return s + strings.Repeat(" ", width-w)
	}
	s = ansi.Truncate(s, width, "…")
	return s + strings.Repeat(" ", width-ansi.StringWidth(s))
}
