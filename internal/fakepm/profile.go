// Package fakepm is a stand-in for Apple's powermetrics, for tests and for
// trying exopower on a machine that has no powermetrics.
//
// It takes powermetrics's flags and writes the real -f plist format, but
// the power it reports comes from a known Profile: each document's values
// are the exact averages of the profile over the document's window. A test
// that knows when its command ran can therefore compute the true energy
// and hold exopower's answer against it.
package fakepm

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Watts is a power per component: CPU, GPU, ANE.
type Watts [3]float64

// Total returns CPU + GPU + ANE.
func (w Watts) Total() float64 { return w[0] + w[1] + w[2] }

// Step is a level of a Profile: from At (seconds into the period) until the
// next step, the power is W.
type Step struct {
	At float64
	W  Watts
}

// Profile is a step function of power over wall-clock time. It repeats
// every Period seconds, counted from the Unix epoch, so any process that
// reads the clock can compute the true energy of a span; Period 0 means it
// never repeats (then it only makes sense as a single constant step).
type Profile struct {
	Period float64
	Steps  []Step
}

// DefaultProfile is a square wave: 4 W CPU, 1 W GPU, 0.5 W ANE for 0.3 s,
// then 22 W, 9 W and 2 W for 0.2 s, so that exopower's clipping and
// placement of windows matter.
const DefaultProfile = "period=0.5 0=4,1,0.5 0.3=22,9,2"

// ParseProfile reads a profile such as "period=0.5 0=4,1,0.5 0.3=22,9,2":
// an optional period in seconds, then steps as seconds=cpu,gpu,ane watts.
// A single step with no period is a constant power.
func ParseProfile(s string) (Profile, error) {
	var p Profile
	for _, f := range strings.Fields(s) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return p, fmt.Errorf("profile: %q: want period=S or S=cpu,gpu,ane", f)
		}
		if k == "period" {
			x, err := strconv.ParseFloat(v, 64)
			if err != nil || x <= 0 {
				return p, fmt.Errorf("profile: period %q: want seconds > 0", v)
			}
			p.Period = x
			continue
		}
		at, err := strconv.ParseFloat(k, 64)
		if err != nil || at < 0 {
			return p, fmt.Errorf("profile: step time %q: want seconds >= 0", k)
		}
		parts := strings.Split(v, ",")
		if len(parts) != 3 {
			return p, fmt.Errorf("profile: step %q: want three watts, cpu,gpu,ane", f)
		}
		var st = Step{At: at}
		for i, x := range parts {
			if st.W[i], err = strconv.ParseFloat(x, 64); err != nil || st.W[i] < 0 {
				return p, fmt.Errorf("profile: step %q: %q is not watts", f, x)
			}
		}
		p.Steps = append(p.Steps, st)
	}
	if len(p.Steps) == 0 {
		return p, fmt.Errorf("profile %q: no steps", s)
	}
	sort.Slice(p.Steps, func(i, j int) bool { return p.Steps[i].At < p.Steps[j].At })
	if p.Steps[0].At != 0 {
		return p, fmt.Errorf("profile %q: the first step must start at 0", s)
	}
	if p.Period == 0 && len(p.Steps) > 1 {
		return p, fmt.Errorf("profile %q: steps need a period", s)
	}
	if p.Period > 0 && p.Steps[len(p.Steps)-1].At >= p.Period {
		return p, fmt.Errorf("profile %q: a step starts after the period ends", s)
	}
	return p, nil
}

// At returns the power at time t.
func (p Profile) At(t time.Time) Watts {
	if p.Period == 0 {
		return p.Steps[0].W
	}
	_, x := p.split(t)
	w := p.Steps[0].W
	for _, s := range p.Steps {
		if s.At <= x {
			w = s.W
		}
	}
	return w
}

// split returns the number of whole periods from the epoch to t and the
// seconds into the period after them. It works in integer nanoseconds: a
// float64 of seconds since the epoch keeps only about 0.2 µs, which would
// blur the energy of a short window.
func (p Profile) split(t time.Time) (int64, float64) {
	period := int64(math.Round(p.Period * 1e9))
	ns := t.UnixNano()
	return ns / period, float64(ns%period) / 1e9
}

// Energy returns the exact energy in joules per component over [from, to].
func (p Profile) Energy(from, to time.Time) Watts {
	var e Watts
	if !to.After(from) {
		return e
	}
	if p.Period == 0 {
		for i := range e {
			e[i] = p.Steps[0].W[i] * to.Sub(from).Seconds()
		}
		return e
	}
	// Whole periods in between, then the pieces of the periods at the ends.
	k0, a := p.split(from)
	k1, b := p.split(to)
	if k1 == k0 {
		return p.periodEnergy(a, b)
	}
	full := p.periodEnergy(0, p.Period)
	head := p.periodEnergy(a, p.Period)
	tail := p.periodEnergy(0, b)
	for i := range e {
		e[i] = head[i] + float64(k1-k0-1)*full[i] + tail[i]
	}
	return e
}

// EnergyLate is the truth for a meter whose timeline trails this
// profile's clock by a delay it cannot see: powermetrics delivers each
// window a little after it closes it, and exopower places the window by
// its arrival (docs/measurement.md, "The one error it cannot see"). Of
// the energies over [from−d, to−d] for d from 0 to most, in steps of a
// millisecond, it returns the one nearest got (by the largest relative
// error of a component) and its d. Only lateness is allowed: a meter
// early by any amount, or late by more than most, gets no nearer truth
// than the energy at one of the ends of that range.
func (p Profile) EnergyLate(from, to time.Time, most time.Duration, got Watts) (Watts, time.Duration) {
	return energyLate(p, from, to, most, got)
}

// Truth is the true power that a meter is held to: a Profile, or a Power,
// which applies overrides to one.
type Truth interface {
	Energy(from, to time.Time) Watts
	EnergyLate(from, to time.Time, most time.Duration, got Watts) (Watts, time.Duration)
}

// integral is any power whose exact energy is known.
type integral interface {
	Energy(from, to time.Time) Watts
}

// energyLate is EnergyLate over any power whose exact energy is known.
func energyLate(p integral, from, to time.Time, most time.Duration, got Watts) (Watts, time.Duration) {
	best, bestD, bestErr := Watts{}, time.Duration(0), math.Inf(1)
	for d := time.Duration(0); d <= most; d += time.Millisecond {
		e := p.Energy(from.Add(-d), to.Add(-d))
		worst := 0.0
		for i := range e {
			if e[i] != 0 {
				worst = max(worst, math.Abs(got[i]-e[i])/e[i])
			} else if got[i] != 0 {
				worst = math.Inf(1)
			}
		}
		if worst < bestErr-1e-9 { // the least delay of those that fit alike
			best, bestD, bestErr = e, d, worst
		}
	}
	return best, bestD
}

// periodEnergy integrates within one period, 0 <= a <= b <= Period.
func (p Profile) periodEnergy(a, b float64) Watts {
	var e Watts
	for i, s := range p.Steps {
		end := p.Period
		if i+1 < len(p.Steps) {
			end = p.Steps[i+1].At
		}
		lo, hi := max(a, s.At), min(b, end)
		if hi > lo {
			for c := range e {
				e[c] += s.W[c] * (hi - lo)
			}
		}
	}
	return e
}
