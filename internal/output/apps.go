package output

import (
	"fmt"
	"io"
	"strings"

	"github.com/exopower/exopower/internal/apps"
)

// AppsRows is how many apps a plain table of exopower top shows: the
// rest of them are counted in a line of their own (--json lists every
// one).
const AppsRows = 20

// appNameWidth is the width of the table's column of names, in
// characters: a longer name is cut, with an ellipsis.
const appNameWidth = 28

// WriteAppsTable writes a refresh of exopower top as a plain table, for
// a pipe or a file: the Mac's rails, the apps with the most power, and
// what the apps leave out. Names were made safe when they were read.
func WriteAppsTable(w io.Writer, s apps.Snapshot) error {
	var b strings.Builder
	whole := "the SoC"
	if s.Scope == "system" {
		whole = "the whole Mac"
	}
	fmt.Fprintf(&b, "%s  %s window, %s since the start: %s %s, %s\n", s.End.Format("15:04:05"),
		Seconds(s.End.Sub(s.Start).Seconds()), Seconds(s.End.Sub(s.Since).Seconds()), whole,
		Watts(s.Mac.Whole(s.Mac.Power)), Joules(s.Mac.Whole(s.Mac.Energy)))
	b.WriteString("  rails  " + railsText(s) + "\n")
	fmt.Fprintf(&b, "  %-*s %11s %11s %11s %12s  %s\n", appNameWidth, "APP", "POWER", "CPU", "GPU", "ENERGY", "PROCESSES")
	for i, a := range s.Apps {
		if i == AppsRows {
			fmt.Fprintf(&b, "  and %s more (exopower top --json lists every one)\n", Count(len(s.Apps)-AppsRows, "app"))
			break
		}
		procs := fmt.Sprint(len(a.Processes))
		switch {
		case a.Gone:
			procs = "gone"
		case a.NotReadable > 0:
			procs += fmt.Sprintf(" (%d not read)", a.NotReadable)
		}
		fmt.Fprintf(&b, "  %-*s %11s %11s %11s %12s  %s\n", appNameWidth, cut(a.Name, appNameWidth),
			Watts(a.Power.Total()), Watts(a.Power.CPU), Watts(a.Power.GPU), Joules(a.Energy.Total()), procs)
	}
	r := s.Rest.Power
	fmt.Fprintf(&b, "  %-*s %11s %11s %11s %12s  %s\n", appNameWidth, "(rest)", Watts(r.Total), Watts(r.CPU), Watts(r.GPU),
		Joules(s.Rest.Energy.Total), restText(s))
	for _, l := range appsNotes(s) {
		b.WriteString("  " + l + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// railsText lists the rails the source reads, and the wall.
func railsText(s apps.Snapshot) string {
	p := s.Mac.Power
	t := fmt.Sprintf("CPU %s  GPU %s  ANE %s", Watts(p.CPU), Watts(p.GPU), Watts(p.ANE))
	if s.Mac.Has.DRAM {
		t += "  DRAM " + Watts(p.DRAM)
	}
	if s.Mac.Has.System {
		t += "  system " + Watts(p.System)
	}
	if s.Wall != nil {
		w := "n/a"
		if s.Wall.HasPower {
			w = Watts(s.Wall.PowerWatts)
		}
		t += "  wall " + w + " (not in the rows' sum)"
	}
	return t
}

// restText says what the rest is made of, now.
func restText(s apps.Snapshot) string {
	r := s.Rest.Power
	t := fmt.Sprintf("ANE %s", Watts(r.ANE))
	if s.Scope == "system" {
		t += fmt.Sprintf(", DRAM %s, the rest of the Mac %s", Watts(r.DRAM), Watts(r.System))
	}
	return t
}

// appsNotes say what the figures leave out, where they do.
func appsNotes(s apps.Snapshot) []string {
	var notes []string
	switch n := s.Processes.NotReadable; {
	case n > 0 && s.AllUsers:
		notes = append(notes, processes(n)+" not read (the kernel refused them): their CPU energy is in the rest")
	case n > 0:
		notes = append(notes, processes(n)+" of other users not read: their CPU energy is in the rest (as root, exopower top reads every user's)")
	}
	if s.CPUScale < 1 {
		notes = append(notes, fmt.Sprintf("the kernel's CPU figures added up to more than the CPU rail: scaled by %.3f to it", s.CPUScale))
	}
	if n := s.Processes.Refused; n > 0 {
		notes = append(notes, Count(n, "reading")+" refused: a process's energy counter went back or jumped beyond belief")
	}
	if f := s.Forgotten; f.Total() > 0 {
		notes = append(notes, "apps gone long ago: "+Joules(f.Total()))
	}
	return append(notes, s.Warnings...)
}

// cut is s in at most n characters, an ellipsis ending it where it was
// cut.
func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
