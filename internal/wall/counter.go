package wall

import (
	"fmt"
	"time"
)

// counter is the span from the plug's counter, with its edges, resets
// and stalls from the power readings; ok is false where the counter
// cannot give it: fewer than two polls with a counter inside the span,
// or a rise of fewer than minCounts counts.
func (c *calc) counter(from, to time.Time) (s Span, ok bool) {
	var in []point
	for _, p := range c.points {
		if !p.at.Before(from) && !p.at.After(to) && p.r.HasCounter {
			in = append(in, p)
		}
	}
	if len(in) < 2 {
		return Span{}, false
	}
	var counted, bridged, unc float64
	var covered time.Duration
	runs, inRun := 0, false
	for k := 0; k+1 < len(in); k++ {
		a, b := in[k], in[k+1]
		rise, d := b.r.Counter-a.r.Counter, b.at.Sub(a.at)
		if !a.stallAfter && rise >= 0 && rise <= c.maxRise(d) {
			counted += rise
			covered += d
			if !inRun {
				runs++
			}
			inRun = true
			continue
		}
		inRun = false
		switch {
		case rise < 0:
			c.resets = append(c.resets, fmt.Sprintf("the plug's counter went back by %.0f J (a reboot, or its counter reset): the energy across it is from its power readings", -rise))
		case rise > c.maxRise(d):
			c.resets = append(c.resets, fmt.Sprintf("the plug's counter jumped ahead by %.0f J in %v, more than a Mac draws: taken as a reset", rise, d.Round(time.Millisecond)))
		}
		j, cov, u := c.powerOver(a.at, b.at)
		bridged, covered, unc = bridged+j, covered+cov, unc+u
	}
	enough := counted >= minCounts*c.res
	if c.res <= 0 {
		enough = counted > 0
	}
	if !enough && len(c.steps) > 0 {
		return Span{}, false
	}
	j1, cov1, u1 := c.powerOver(from, in[0].at)
	j2, cov2, u2 := c.powerOver(in[len(in)-1].at, to)
	return Span{
		Joules:            counted + bridged + j1 + j2,
		UncertaintyJoules: float64(runs)*c.res + unc + u1 + u2,
		Method:            MethodCounter,
		Coverage:          share(covered+cov1+cov2, from, to),
		Polls:             c.inside(from, to, false),
	}, true
}

// warnings are what the plug did wrong over [from, to].
func (c *calc) warnings(from, to time.Time, tried, failed int) []string {
	var ws []string
	if failed > 0 {
		ws = append(ws, fmt.Sprintf("the plug did not answer %d of %d polls: that time is not covered where its counter does not span it", failed, tried))
	}
	for _, s := range c.stalls {
		if s.to.Before(from) || s.from.After(to) {
			continue
		}
		ws = append(ws, fmt.Sprintf("the plug's readings stayed the same for %v (%d polls) while it read %g W: they are stale, and that time is not counted",
			s.to.Sub(s.from).Round(time.Millisecond), s.polls, s.watts))
	}
	ws = append(ws, c.resets...)
	if w := c.onBattery(from, to); w != "" {
		ws = append(ws, w)
	}
	if len(c.points) == 0 || c.points[len(c.points)-1].at.Before(to.Add(-2*c.hold)) {
		ws = append(ws, "the plug gave no reading near the span's end: that time is not covered")
	}
	return ws
}

// onBattery says how much of [from, to] a MacBook ran from its battery
// (--wall adapter): the wall's 0 W is true then, and not what the Mac
// drew, which its battery's discharge is.
func (c *calc) onBattery(from, to time.Time) string {
	n, in, flows := 0, 0, 0
	var discharge float64
	for _, p := range c.points {
		if p.at.Before(from) || p.at.After(to) {
			continue
		}
		in++
		if p.r.OnBattery {
			n++
			if p.r.HasBattery {
				flows++
				discharge += -p.r.Battery
			}
		}
	}
	if n == 0 {
		return ""
	}
	w := fmt.Sprintf("the Mac ran from its battery for %d of %d readings: the wall gave it 0 W then", n, in)
	if flows > 0 {
		w += fmt.Sprintf(", and its battery's discharge, %.2f W on average, is what it drew", discharge/float64(flows))
	}
	return w
}
