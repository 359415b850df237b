package llm

import (
	"sort"
	"sync"
	"time"

	"github.com/exopower/exopower/internal/wire"
)

// maxWindows bounds a node's windows kept over a benchmark: at 100 ms,
// more than a day of them. Older ones are let go, and a request older
// than what is kept reads as not covered.
const maxWindows = 1 << 20

// window is a node's average power over [start, end], by its clock.
type window struct {
	start, end  time.Time
	soc, system float64
	hasSystem   bool
}

// Timeline is one node's windows as they come from its stream, which a
// request's phases are integrated over: each window's power held over
// its length, as the ledger holds it.
type Timeline struct {
	Node, Label, URL string
	mu               sync.Mutex
	windows          []window
	// offset is how far the node's clock is ahead of this Mac's: a time
	// of this Mac's is offset later by the node's.
	offset time.Duration
	// seen is closed when the first window comes.
	seen chan struct{}
	once sync.Once
}

func newTimeline(node, url string) *Timeline {
	return &Timeline{Node: node, URL: url, seen: make(chan struct{})}
}

// add takes a line of the node's stream.
func (t *Timeline) add(l wire.SampleLine) {
	end, err := time.Parse(time.RFC3339Nano, l.Time)
	if err != nil || !(l.WindowSeconds > 0) {
		return
	}
	w := window{start: end.Add(-time.Duration(float64(l.WindowSeconds) * 1e9)), end: end, soc: float64(l.PowerWatts.Total)}
	if s := l.PowerWatts.System; s != nil {
		w.system, w.hasSystem = float64(*s), true
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if n := len(t.windows); n > 0 && !w.end.After(t.windows[n-1].end) {
		return
	}
	if len(t.windows) == maxWindows {
		t.windows = append(t.windows[:0], t.windows[maxWindows/2:]...)
	}
	t.windows = append(t.windows, w)
	t.once.Do(func() { close(t.seen) })
}

// reaches says whether the node's windows reach at, by this Mac's
// clock.
func (t *Timeline) reaches(at time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(t.windows)
	return n > 0 && !t.windows[n-1].end.Before(at.Add(t.offset))
}

// Energy is what the node's windows give over [from, to] (this Mac's
// clock), in joules: the SoC's, and the whole system's when every window
// that covers any of it has it; covered is how much of [from, to] the
// windows cover.
type Energy struct {
	SoC, System float64
	HasSystem   bool
	Covered     time.Duration
}

// Energy integrates the node's power over [from, to].
func (t *Timeline) Energy(from, to time.Time) Energy {
	t.mu.Lock()
	defer t.mu.Unlock()
	from, to = from.Add(t.offset), to.Add(t.offset)
	e := Energy{HasSystem: true}
	i := sort.Search(len(t.windows), func(i int) bool { return t.windows[i].end.After(from) })
	for ; i < len(t.windows) && t.windows[i].start.Before(to); i++ {
		w := t.windows[i]
		d := minTime(w.end, to).Sub(maxTime(w.start, from))
		if d <= 0 {
			continue
		}
		e.SoC += w.soc * d.Seconds()
		e.System += w.system * d.Seconds()
		e.HasSystem = e.HasSystem && w.hasSystem
		e.Covered += d
	}
	if e.Covered == 0 {
		e.HasSystem = false
	}
	return e
}

// idle is the node's windows within [from, to], each clipped to it: the
// parts an idle baseline is read from.
func (t *Timeline) idle(from, to time.Time) []part {
	t.mu.Lock()
	defer t.mu.Unlock()
	from, to = from.Add(t.offset), to.Add(t.offset)
	var ps []part
	i := sort.Search(len(t.windows), func(i int) bool { return t.windows[i].end.After(from) })
	for ; i < len(t.windows) && t.windows[i].start.Before(to); i++ {
		w := t.windows[i]
		if d := minTime(w.end, to).Sub(maxTime(w.start, from)); d > 0 {
			ps = append(ps, part{seconds: d.Seconds(), soc: w.soc, system: w.system, hasSystem: w.hasSystem})
		}
	}
	return ps
}

// steps are the node's windows from t0 on (this Mac's clock), in seconds
// from t0, for a picture: each run of windows shorter than least merged
// into one of their energy over their time. A window cut short at a
// request's edge holds a few whole millijoules, whose rounding would
// draw as a spike; merged, the energy drawn is the same.
func (t *Timeline) steps(t0, t1 time.Time, least time.Duration) [][3]float64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	var s [][3]float64
	var from time.Time
	joules := 0.0
	for i, w := range t.windows {
		a, b := w.start.Add(-t.offset), w.end.Add(-t.offset)
		if !b.After(t0) || !a.Before(t1) {
			continue
		}
		if joules == 0 && from.IsZero() {
			from = a
		}
		joules += w.soc * w.end.Sub(w.start).Seconds()
		gap := i+1 < len(t.windows) && t.windows[i+1].start.After(w.end)
		if b.Sub(from) < least && !gap && i+1 < len(t.windows) {
			continue
		}
		s = append(s, [3]float64{from.Sub(t0).Seconds(), b.Sub(t0).Seconds(), joules / b.Sub(from).Seconds()})
		from, joules = time.Time{}, 0
	}
	return s
}

// part is a window's part within an idle span.
type part struct {
	seconds, soc, system float64
	hasSystem            bool
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
