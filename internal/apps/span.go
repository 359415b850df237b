package apps

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/exopower/exopower/internal/safe"
	"github.com/exopower/exopower/internal/wire"
)

// Span is one app's energy over a span of time (a span of exopower
// serve that names it, ?app=, and run --app): what the Poller's Rounds
// gave it from the last Round at or before the span's start (its base)
// to the first at or after its end. That is the increase of the app's
// Energy between those two Rounds, and of its counter in exopower serve
// --apps, which follows the same Rounds; it is summed Round by Round, so
// that an app forgotten and found again meanwhile (its Energy then
// starting again from 0) keeps what it had. Its methods are called from
// the goroutine that calls the Poller's, after a Round.
type Span struct {
	name       string
	start, end time.Time
	ended      bool
	// from is the base's time, to the last Round's counted; reads how
	// many were counted.
	from, to time.Time
	reads    int
	energy   Figures
	// seen counts the app's processes alive at the base and those that
	// came to it after; live and notReadable are as of the last Round.
	seen, live, notReadable int
	warnings                []string
}

// OpenSpan begins the span of the app called name (as App.Name names
// it, exactly) that starts at start, on the timeline of the Readings:
// its base is the last Round, or, where that ended after start (a Round
// came between the span's start and this call), the one before it.
func (p *Poller) OpenSpan(name string, start time.Time) *Span {
	s := &Span{name: name, start: start, from: p.prev.At}
	a := p.apps[name]
	if p.seq == 0 || !p.prev.At.After(start) {
		if a != nil {
			s.seen, s.live, s.notReadable = a.live, a.live, a.notReadable
		}
		return s
	}
	s.from = p.before
	if a != nil {
		s.seen = a.live0
	}
	if p.before.After(start) {
		s.warnings = append(s.warnings, fmt.Sprintf("the app's energy over the span's first %v is not counted: the processes were read more than once between the span's start and its app's first read",
			p.before.Sub(start).Round(time.Millisecond)))
	}
	s.count(p)
	return s
}

// Add takes the Poller's last Round: the span's base where it ended at
// or before the span's start, one of the span's where it began before
// its end (or the span has none yet), else none of the span's.
func (s *Span) Add(p *Poller) {
	switch {
	case !p.prev.At.After(s.start):
		s.from, s.seen, s.live, s.notReadable = p.prev.At, 0, 0, 0
		if a := p.apps[s.name]; a != nil {
			s.seen, s.live, s.notReadable = a.live, a.live, a.notReadable
		}
	case !s.ended || p.before.Before(s.end):
		s.count(p)
	}
}

// count adds the last Round to the span.
func (s *Span) count(p *Poller) {
	s.reads++
	s.to = p.prev.At
	a := p.apps[s.name]
	if a == nil {
		s.live, s.notReadable = 0, 0
		return
	}
	s.energy = s.energy.add(a.round)
	s.seen += a.joined - a.joined0
	s.live, s.notReadable = a.live, a.notReadable
}

// End ends the span at end: a Round that begins at or after it is none
// of the span's.
func (s *Span) End(end time.Time) { s.end, s.ended = end, true }

// Covered reports whether the span has ended and a Round at or after
// its end has been counted: its figures are whole.
func (s *Span) Covered() bool { return s.ended && s.reads > 0 && !s.to.Before(s.end) }

// Last is the time of the last Round counted, the base's where none
// was.
func (s *Span) Last() time.Time {
	if s.reads == 0 {
		return s.from
	}
	return s.to
}

// Wire is the span's figures as JSON (wire.App), with the warnings for
// its summary. p is the Poller, for the names of the apps it runs where
// the span's was not seen.
func (s *Span) Wire(p *Poller) (*wire.App, []string) {
	d := time.Duration(0)
	if s.reads > 0 {
		d = s.to.Sub(s.from)
	}
	w := &wire.App{
		Name: s.name, Seen: s.seen > 0, Processes: s.seen, ProcessesRunning: s.live, ProcessesNotReadable: s.notReadable,
		Reads: s.reads, ReadSeconds: wire.Num(d.Seconds()),
		EnergyJoules:  wire.AppFigures{Total: wire.Num(s.energy.Total()), CPU: wire.Num(s.energy.CPU), GPU: wire.Num(s.energy.GPU)},
		AvgPowerWatts: wire.AppFigures{},
	}
	if k := perSecond(d); k > 0 {
		pw := s.energy.scale(k)
		w.AvgPowerWatts = wire.AppFigures{Total: wire.Num(pw.Total()), CPU: wire.Num(pw.CPU), GPU: wire.Num(pw.GPU)}
	}
	warnings := slices.Clone(s.warnings)
	if s.seen == 0 {
		warnings = append(warnings, notSeen(s.name, p.Like(s.name)))
	}
	if s.notReadable > 0 {
		warnings = append(warnings, fmt.Sprintf("%d of the app \"%s\"'s processes are another user's, whose CPU energy this user may not read: it is not in the app's figure (run as root to read every user's)",
			s.notReadable, s.name))
	}
	return w, warnings
}

// notSeen says that no process of the app name was seen, and which apps
// of that name but for case run. Names are quoted as they are, not as Go
// quotes them: they are safe already (CheckName, safe.Text), and a name
// given as top shows it ("\x1b…") would come back with its backslashes
// doubled, reading as another name.
func notSeen(name string, like []string) string {
	msg := fmt.Sprintf("no process of an app called \"%s\" was seen over the span: its energy is 0", name)
	if len(like) > 0 {
		q := make([]string, len(like))
		for i, l := range like {
			q[i] = "\"" + l + "\""
		}
		return msg + "; names are matched exactly, case and all, and this Mac runs " + strings.Join(q, ", ")
	}
	return msg + "; names are matched exactly, case and all, as exopower top shows them"
}

// Like is the names of the apps called name but for case, at most 5,
// sorted.
func (p *Poller) Like(name string) []string {
	var out []string
	for n := range p.apps {
		if n != name && strings.EqualFold(n, name) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out[:min(len(out), 5)]
}

// CheckName says why name can be no app's name, as App.Name names apps,
// or "" where it may be one: a name holds no control character and no
// byte that is not UTF-8 (safe.Text writes those as escapes, \x1b), and
// no longer than safe.Text makes one (MaxText characters, each escaped
// in at most 6 bytes, and a … where it cut it).
func CheckName(name string) string {
	switch {
	case name == "":
		return "an app's name is empty"
	case len(name) > maxName:
		return fmt.Sprintf("no app's name is longer than %d bytes", maxName)
	case !utf8.ValidString(name):
		return "an app's name is UTF-8: give it as exopower top shows it, a byte that is not written as \\xff"
	}
	for _, r := range name {
		if s := string(r); safe.Text(s) != s {
			return "an app's name holds no control character: give it as exopower top shows it, an escape written as \\x1b"
		}
	}
	return ""
}

// maxName is the longest name safe.Text makes, in bytes.
const maxName = 6*safe.MaxText + len("…")
