package wall

import (
	"math"
	"sort"
	"time"

	"github.com/exopower/exopower/internal/power"
)

// Span is the energy a plug measured over a span of the timeline.
type Span struct {
	// Joules is the energy over the span, UncertaintyJoules how far
	// from the truth it may be (the counter's counts and the power
	// readings' sampling; not the plug's calibration, typically 1-2 %).
	Joules, UncertaintyJoules float64
	// Method is "counter" when the plug's energy counter gave the span's
	// energy (its edges and resets from the power readings), "power"
	// when its power readings alone did.
	Method string
	// Coverage is the share of the span that readings covered: 1 when
	// all of it was measured. Time without a reading counts no energy.
	Coverage float64
	// Polls is how many good readings the span holds; Resets how many
	// times the counter went back (or jumped beyond belief).
	Polls, Resets int
	// Warnings say what the plug did wrong in the span, safe to print.
	Warnings []string
}

// The methods of a Span.
const (
	MethodCounter = "counter"
	MethodPower   = "power"
)

// minCounts is how many counts the counter must rise over a span for it
// to give the span's energy: with fewer, one count is more than a tenth
// of the answer, more than the power readings are off by.
const minCounts = 10

// stallPolls is how many polls in a row must give the very same reading,
// while the power says the counter should have moved, for the plug to
// be taken as stalled: its readings are stale, not measurements.
const stallPolls = 5

// stallSpan is how long those readings must span too: a plug refreshes
// its readings about once a second, and a bench that reads it at each
// run's start and end asks it several times within one refresh, each
// answer rightly the same.
const stallSpan = (stallPolls - 1) * DefaultInterval

// Energy is the plug's energy over [from, to] on the meter's clock: from
// the counter where the span holds at least minCounts of it and two
// polls (the differences of the counter between polls, the edges before
// the first poll and after the last, and any reset, from the power
// readings), from the power readings alone elsewhere.
func (m *Meter) Energy(from, to time.Time) Span {
	info := m.plug.Info()
	m.mu.Lock()
	polls, tried, failed := m.window(from, to)
	m.mu.Unlock()
	if !to.After(from) {
		return Span{Method: MethodPower}
	}
	c := newCalc(polls, info.CounterResolution, m.interval)
	c.judgesStale = info.JudgesStale
	c.findStalls(polls)
	c.makeSteps()
	s, ok := c.counter(from, to)
	if !ok {
		s = c.power(from, to)
	}
	s.Resets = len(c.resets)
	s.Warnings = c.warnings(from, to, tried, failed)
	return s
}

// window is the good polls that bear on [from, to], with the runs of
// equal readings that reach into it whole (a stall is judged by its
// whole length), and how many polls were tried and failed within it.
func (m *Meter) window(from, to time.Time) (polls []poll, tried, failed int) {
	margin := 2 * m.interval
	lo := sort.Search(len(m.polls), func(i int) bool { return !m.polls[i].at.Before(from.Add(-margin)) })
	hi := sort.Search(len(m.polls), func(i int) bool { return m.polls[i].at.After(to.Add(margin)) })
	// Only a run at a power above 0 can be a stall: a plug idle for
	// hours is not read whole.
	if r, ok := m.okReading(lo, hi, 1); ok && r.Power > 0 {
		for lo > 0 && (!m.polls[lo-1].ok || m.polls[lo-1].r == r) {
			lo--
		}
	}
	if r, ok := m.okReading(hi-1, lo-1, -1); ok && r.Power > 0 {
		for hi < len(m.polls) && (!m.polls[hi].ok || m.polls[hi].r == r) {
			hi++
		}
	}
	for _, p := range m.polls[lo:hi] {
		if p.ok {
			polls = append(polls, p)
		}
		if !p.at.Before(from) && !p.at.After(to) {
			tried++
			if !p.ok {
				failed++
			}
		}
	}
	return polls, tried, failed
}

// okReading is the reading of the first good poll from i towards end
// (exclusive), by step dir.
func (m *Meter) okReading(i, end, dir int) (Reading, bool) {
	for ; i != end; i += dir {
		if m.polls[i].ok {
			return m.polls[i].r, true
		}
	}
	return Reading{}, false
}

// point is a good reading that is a measurement: not a stale copy.
type point struct {
	at time.Time
	r  Reading
	// stallAfter says the readings after this one were stale until the
	// next point.
	stallAfter bool
}

// step is a power reading held over [a, b], around its time at;
// left and right are how far the power may have moved on each side of
// at, the differences to the readings before and after.
type step struct {
	a, at, b    time.Time
	w           float64
	left, right float64
}

// stall is a run of stale readings.
type stall struct {
	from, to time.Time
	polls    int
	watts    float64
}

// calc is a span's arithmetic over the polls that bear on it.
type calc struct {
	points []point
	steps  []step
	stalls []stall
	res    float64
	hold   time.Duration
	resets []string
	// judgesStale: the plug fails a stale reading itself, and repeats
	// fresh ones (Info.JudgesStale); no run of them is a stall.
	judgesStale bool
}

func newCalc(polls []poll, res float64, interval time.Duration) *calc {
	// A reading is held for up to three quarters of an interval each
	// side, to the midpoint of its neighbours': a round trip's jitter is
	// covered, one poll missed leaves half an interval uncovered.
	return &calc{res: res, hold: interval * 3 / 4}
}

// findStalls keeps the points: the polls but the runs of equal readings
// long enough, with power enough that the counter should have moved, to
// be stalls, whose readings are not measurements.
func (c *calc) findStalls(polls []poll) {
	for i := 0; i < len(polls); {
		j := i
		for j+1 < len(polls) && polls[j+1].r == polls[i].r {
			j++
		}
		r := polls[i].r
		moved := !r.HasCounter || r.Power*polls[j].at.Sub(polls[i].at).Seconds() >= 2*c.res
		if !c.judgesStale && j-i+1 >= stallPolls && polls[j].at.Sub(polls[i].at) >= stallSpan && r.HasPower && r.Power > 0 && moved {
			// When the readings froze between the poll before the run
			// and its first is not known: the first is a copy too.
			if n := len(c.points); n > 0 {
				c.points[n-1].stallAfter = true
			}
			c.stalls = append(c.stalls, stall{from: polls[i].at, to: polls[j].at, polls: j - i + 1, watts: r.Power})
		} else {
			for k := i; k <= j; k++ {
				c.points = append(c.points, point{at: polls[k].at, r: polls[k].r})
			}
		}
		i = j + 1
	}
}

// makeSteps holds each power reading around its time.
func (c *calc) makeSteps() {
	var ps []point
	for _, p := range c.points {
		if p.r.HasPower {
			ps = append(ps, p)
		}
	}
	for k, p := range ps {
		s := step{a: p.at.Add(-c.hold), at: p.at, b: p.at.Add(c.hold), w: p.r.Power}
		if k > 0 {
			s.a = later(s.a, mid(ps[k-1].at, p.at))
			s.left = math.Abs(p.r.Power - ps[k-1].r.Power)
		}
		if k+1 < len(ps) {
			s.b = earlier(s.b, mid(p.at, ps[k+1].at))
			s.right = math.Abs(ps[k+1].r.Power - p.r.Power)
		}
		if p.stallAfter {
			// The readings after it were stale: it holds no longer
			// than if they had failed.
			s.b = p.at.Add(c.hold)
		}
		if k == 0 {
			s.left = s.right
		}
		if k+1 == len(ps) {
			s.right = s.left
		}
		c.steps = append(c.steps, s)
	}
}

// powerOver integrates the held power readings over [a, b]: joules, the
// time covered, and the uncertainty.
func (c *calc) powerOver(a, b time.Time) (joules float64, covered time.Duration, unc float64) {
	i := sort.Search(len(c.steps), func(i int) bool { return c.steps[i].b.After(a) })
	for ; i < len(c.steps) && c.steps[i].a.Before(b); i++ {
		s := c.steps[i]
		lo, hi := later(s.a, a), earlier(s.b, b)
		if !hi.After(lo) {
			continue
		}
		d := hi.Sub(lo)
		joules += s.w * d.Seconds()
		covered += d
		left := max(earlier(s.at, hi).Sub(lo), 0)
		unc += s.left*left.Seconds() + s.right*(d-left).Seconds()
	}
	return joules, covered, unc
}

// power is the span from the power readings alone.
func (c *calc) power(from, to time.Time) Span {
	j, covered, unc := c.powerOver(from, to)
	return Span{Joules: j, UncertaintyJoules: unc, Method: MethodPower, Coverage: share(covered, from, to), Polls: c.inside(from, to, false)}
}

// inside counts the points within [from, to], those with a counter
// alone if counters.
func (c *calc) inside(from, to time.Time, counters bool) int {
	n := 0
	for _, p := range c.points {
		if !p.at.Before(from) && !p.at.After(to) && (!counters || p.r.HasCounter) {
			n++
		}
	}
	return n
}

func share(covered time.Duration, from, to time.Time) float64 {
	return math.Min(1, covered.Seconds()/to.Sub(from).Seconds())
}

func mid(a, b time.Time) time.Time { return a.Add(b.Sub(a) / 2) }

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// maxRise is the most a counter can rise over d: a Mac's most, and two
// counts for the rounding at both ends.
func (c *calc) maxRise(d time.Duration) float64 {
	return power.MaxSystemWatts*d.Seconds() + 2*c.res
}
