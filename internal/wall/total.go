package wall

import "time"

// Total is the plug's energy since the meter's first good reading, as a
// counter that only grows: what serve publishes as
// exopower_wall_energy_joules_total, whose increase() over any range is
// the plug's energy over it.
type Total struct {
	// Joules is the energy so far; Covered the time it holds.
	Joules  float64
	Covered time.Duration
	// FromCounter is the part of Covered that the plug's counter spans;
	// the rest only its power readings do.
	FromCounter time.Duration
	// Resets is how many times the counter went back or jumped beyond
	// belief between two readings.
	Resets int
}

// running is the arithmetic behind Total.
type running struct {
	Total
	// counted is the counter's own sum: its rises between readings, and
	// across a reset the power readings' energy. It is exact to a count
	// however long the range, but moves a whole count at a time: a
	// Tasmota or a Kasa counts watt-hours, 90 s of a Mac at 40 W.
	counted float64
	last    *poll
}

// carry adds the energy between the last good poll and p. The power
// readings place it between the counts (a trapezoid between readings an
// interval or two apart, each held for three quarters of an interval
// across a longer gap, where time without a reading counts nothing); the
// counter holds the total within one count of its own sum, so that over
// an hour or a day the total is the counter's, and a rate over a minute
// still follows the power. It never goes back. The caller holds m.mu.
func (m *Meter) carry(p poll) {
	t := &m.total
	q := t.last
	t.last = &p
	if q == nil || !p.at.After(q.at) {
		return
	}
	d := p.at.Sub(q.at)
	byPower, powered := m.powerBetween(*q, p, d)
	res := m.plug.Info().CounterResolution
	if !q.r.HasCounter || !p.r.HasCounter {
		t.Joules += byPower
		t.Covered += powered
		return
	}
	step := byPower
	if rise := p.r.Counter - q.r.Counter; rise >= 0 && rise <= (&calc{res: res}).maxRise(d) {
		t.counted += rise
		t.Covered += d
		t.FromCounter += d
		if !q.r.HasPower || !p.r.HasPower {
			step = rise
		}
	} else {
		t.Resets++
		t.counted += byPower
		t.Covered += powered
	}
	t.Joules = max(t.Joules, min(max(t.Joules+step, t.counted-res), t.counted+res))
}

// powerBetween is the power readings' energy between two good polls d
// apart, and the time it covers.
func (m *Meter) powerBetween(q, p poll, d time.Duration) (float64, time.Duration) {
	if !q.r.HasPower || !p.r.HasPower {
		return 0, 0
	}
	if d <= 2*m.interval {
		return (q.r.Power + p.r.Power) / 2 * d.Seconds(), d
	}
	hold := m.interval * 3 / 4
	return (q.r.Power + p.r.Power) * hold.Seconds(), 2 * hold
}

// Total is the plug's energy so far (carry).
func (m *Meter) Total() Total {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.total.Total
}
