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
	// FromCounter is the part of Covered whose energy came from the
	// plug's counter; the rest came from its power readings.
	FromCounter time.Duration
	// Resets is how many times the counter went back or jumped beyond
	// belief between two readings.
	Resets int
}

// carry adds the energy between the last good poll and p to the total:
// the counter's rise where both hold a counter that rose by what a Mac
// can draw (a sum of rises telescopes to the counter's own difference,
// exact to one count however long the range), else the power readings,
// a trapezoid between two readings an interval or two apart and each held
// for three quarters of an interval across a longer gap (time without a
// reading counts nothing, as in a span). The caller holds m.mu.
func (m *Meter) carry(p poll) {
	q := m.last
	m.last = &p
	if q == nil {
		return
	}
	d := p.at.Sub(q.at)
	if d <= 0 {
		return
	}
	if q.r.HasCounter && p.r.HasCounter {
		rise := p.r.Counter - q.r.Counter
		res := m.plug.Info().CounterResolution
		if rise >= 0 && rise <= (&calc{res: res}).maxRise(d) {
			m.total.Joules += rise
			m.total.Covered += d
			m.total.FromCounter += d
			return
		}
		m.total.Resets++
	}
	if !q.r.HasPower || !p.r.HasPower {
		return
	}
	if d <= 2*m.interval {
		m.total.Joules += (q.r.Power + p.r.Power) / 2 * d.Seconds()
		m.total.Covered += d
		return
	}
	hold := m.interval * 3 / 4
	m.total.Joules += (q.r.Power + p.r.Power) * hold.Seconds()
	m.total.Covered += 2 * hold
}

// Total is the plug's energy so far (carry).
func (m *Meter) Total() Total {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.total
}
