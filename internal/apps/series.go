package apps

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/exopower/exopower/internal/power"
)

// OtherApp is the name of the series of every app without one of its
// own. An app of that very name is counted in it.
const OtherApp = "other"

// RankTime is how apps are ranked for a series of their own: by their
// energy, each joule weighing e^(-age/RankTime), so that an app that has
// drawn much in the last hour passes one that drew more last week.
const RankTime = time.Hour

// Series is the bounded set of per-app energy counters that exopower
// serve publishes of a Poller: a series for each of the Top apps by
// recent energy, kept once it is exposed (a counter must not vanish and
// come back lower) until its app is forgotten, and one for every other
// app together (OtherApp). Every joule of a round goes to the series of
// its app if it has one then, else to other's, so that each counter only
// grows; an app's series counts from when it was exposed. What the apps
// leave out is the remainder: the CPU's and the GPU's energy that no
// process holds (with all the energy before the Poller started), and the
// energy of the series dropped when their apps were forgotten. The
// series, other and the remainder add up to the Mac's CPU and GPU
// energy, as the Poller's readings give it, at every round.
//
// At most 2×Top apps have series of their own at once: one that has
// fallen out of the Top keeps its series while it lives, and the next
// app to rise has one while there is room, or where the series of least
// recent energy has fallen far below the Top's (evict).
type Series struct {
	top          int
	entries      map[string]*entry
	exposed      int
	other        Figures
	unattributed Figures
	dropped      Figures
	order        []*entry // for ranking, reused
}

type entry struct {
	name    string
	score   float64 // joules, weighed by age
	exposed bool
	energy  Figures // since it was exposed
}

// NewSeries makes the series of a Poller just started, whose readings'
// energy was base at its start: that is the remainder's.
func NewSeries(top int, base power.Values) *Series {
	return &Series{top: top, entries: map[string]*entry{}, unattributed: Figures{CPU: base.CPU, GPU: base.GPU}}
}

// Add takes the Poller's last Round, dt after the one before.
func (s *Series) Add(p *Poller, dt time.Duration) {
	decay := math.Exp(-dt.Seconds() / RankTime.Seconds())
	for _, e := range s.entries {
		e.score *= decay
	}
	for _, r := range p.Apps() {
		e := s.entries[r.Name]
		if e == nil {
			e = &entry{name: r.Name}
			s.entries[r.Name] = e
		}
		e.score += r.Round.Total()
		if e.exposed {
			e.energy = e.energy.add(r.Round)
		} else {
			s.other = s.other.add(r.Round)
		}
		if r.Forgotten {
			if e.exposed {
				s.dropped = s.dropped.add(e.energy)
				s.exposed--
			}
			delete(s.entries, r.Name)
		}
	}
	rest := p.Rest()
	s.unattributed = s.unattributed.add(Figures{CPU: rest.CPU, GPU: rest.GPU})
	s.expose()
}

// expose gives the Top apps by recent energy a series, where they have
// none and there is room.
func (s *Series) expose() {
	s.order = s.order[:0]
	for _, e := range s.entries {
		if e.score > 0 && e.name != OtherApp {
			s.order = append(s.order, e)
		}
	}
	slices.SortFunc(s.order, func(a, b *entry) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.name, b.name)
	})
	top := s.order[:min(s.top, len(s.order))]
	for _, e := range top {
		if e.exposed {
			continue
		}
		if s.exposed >= 2*s.top && !s.evict(top[len(top)-1].score/evictBelow) {
			continue
		}
		e.exposed = true
		s.exposed++
	}
}

// evictBelow is how far below the Top's last an app's recent energy must
// have fallen for its series to give its place to an app in the Top:
// well below, so that two apps near the line do not trade places.
const evictBelow = 4

// evict drops the series of the app of least recent energy, where that is
// below bar, to give its place to an app in the Top: apps that drew for
// a moment once and then idled for weeks would otherwise hold every
// place, and the busiest app would never have a series. Its energy joins
// the dropped part of the remainder, as a forgotten app's does; its
// app's energy from now on is other's, and should it rise again its new
// series starts at 0, which Prometheus reads as a counter's reset.
func (s *Series) evict(bar float64) bool {
	var low *entry
	for _, e := range s.entries {
		if e.exposed && e.score < bar && (low == nil || e.score < low.score || e.score == low.score && e.name < low.name) {
			low = e
		}
	}
	if low == nil {
		return false
	}
	s.dropped = s.dropped.add(low.energy)
	low.exposed, low.energy = false, Figures{}
	s.exposed--
	return true
}

// Each calls f with every app's series, in no order, then other's: the
// energy of each, in joules.
func (s *Series) Each(f func(app string, energy Figures)) {
	for _, e := range s.entries {
		if e.exposed {
			f(e.name, e.energy)
		}
	}
	f(OtherApp, s.other)
}

// Remainder is what the apps' series leave out, in joules: the energy no
// process holds, and that of the series dropped.
func (s *Series) Remainder() (unattributed, dropped Figures) { return s.unattributed, s.dropped }
