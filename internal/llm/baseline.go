package llm

import (
	"fmt"
	"math"
	"slices"

	"github.com/exopower/exopower/internal/bench"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/wire"
)

// newBaseline is the idle power of every node over the idle spans, and
// their sum; nil with no idle span, or when a node's windows covered
// none of them.
func newBaseline(tls []*Timeline, idle []span) *Baseline {
	if len(idle) == 0 {
		return nil
	}
	b := &Baseline{}
	for _, s := range idle {
		b.DurationSeconds += wire.Num(s.to.Sub(s.from).Seconds())
	}
	var soc, socVar, sys, sysVar float64
	hasSystem := true
	for _, t := range tls {
		var parts []part
		for _, s := range idle {
			parts = append(parts, t.idle(s.from, s.to)...)
		}
		p, se := weighted(parts, func(x part) float64 { return x.soc })
		if math.IsNaN(p) {
			return nil
		}
		nb := NodeBaseline{Node: t.Label, PowerWatts: wire.Num(p), StandardErrorWatts: num(se)}
		soc, socVar = soc+p, socVar+sq(se)
		if all(parts, func(x part) bool { return x.hasSystem }) {
			ps, ses := weighted(parts, func(x part) float64 { return x.system })
			nb.SystemPowerWatts, nb.SystemStandardErrorWatts = num(ps), num(ses)
			sys, sysVar = sys+ps, sysVar+sq(ses)
		} else {
			hasSystem = false
		}
		b.Nodes = append(b.Nodes, nb)
	}
	b.PowerWatts, b.StandardErrorWatts = wire.Num(soc), num(math.Sqrt(socVar))
	if hasSystem {
		b.SystemPowerWatts, b.SystemStandardErrorWatts = num(sys), num(math.Sqrt(sysVar))
	}
	if len(tls) == 1 {
		b.Nodes = nil
	}
	return b
}

func sq(x float64) float64 { return x * x }

func all(ps []part, f func(part) bool) bool {
	for _, p := range ps {
		if !f(p) {
			return false
		}
	}
	return true
}

// weighted is the windows' mean power, weighed by their lengths, and its
// standard error, read as bench reads it: from the windows of at least
// half the median length, since one cut short at a span's edge has a
// power from a few whole millijoules, whose rounding would read as
// noise. (Its energy still counts in the mean.)
func weighted(ps []part, of func(part) float64) (mean, se float64) {
	v, w, lengths := make([]float64, len(ps)), make([]float64, len(ps)), make([]float64, len(ps))
	for i, p := range ps {
		v[i], w[i], lengths[i] = of(p), p.seconds, p.seconds
	}
	mean, _ = bench.WeightedMean(v, w)
	slices.Sort(lengths)
	var fv, fw []float64
	for i, p := range ps {
		if p.seconds >= lengths[(len(lengths)-1)/2]/2 {
			fv, fw = append(fv, v[i]), append(fw, w[i])
		}
	}
	_, se = bench.WeightedMean(fv, fw)
	return mean, se
}

// soc is node k's idle power in the SoC's scope (k -1: the sum).
func (b *Baseline) soc(k int) idlePower {
	switch {
	case b == nil:
		return idlePower{}
	case k < 0 || len(b.Nodes) == 0:
		return idlePower{watts: float64(b.PowerWatts), se: val(b.StandardErrorWatts), ok: true}
	}
	n := b.Nodes[k]
	return idlePower{watts: float64(n.PowerWatts), se: val(n.StandardErrorWatts), ok: true}
}

// system is the same in the whole Mac's scope.
func (b *Baseline) system(k int) idlePower {
	switch {
	case b == nil:
		return idlePower{}
	case k < 0 || len(b.Nodes) == 0:
		return idlePower{watts: val(b.SystemPowerWatts), se: val(b.SystemStandardErrorWatts), ok: b.SystemPowerWatts != nil}
	}
	n := b.Nodes[k]
	return idlePower{watts: val(n.SystemPowerWatts), se: val(n.SystemStandardErrorWatts), ok: n.SystemPowerWatts != nil}
}

// drift says, when the idle power before the first setting and after the
// last differ beyond their errors, that the Macs' background changed, as
// bench says it.
func drift(tls []*Timeline, idle []span) (string, bool) {
	if len(idle) != 2 {
		return "", false
	}
	var p, v [2]float64
	for i, s := range idle {
		for _, t := range tls {
			m, se := weighted(t.idle(s.from, s.to), func(x part) float64 { return x.soc })
			if math.IsNaN(m) {
				return "", false
			}
			p[i], v[i] = p[i]+m, v[i]+sq(se)
		}
	}
	if !bench.Differ(p[0], math.Sqrt(v[0]), p[1], math.Sqrt(v[1])) {
		return "", false
	}
	return fmt.Sprintf("the idle power before the requests (%s) and after them (%s) differ beyond their errors: "+
		"the Mac's background changed (or the model's load: the baseline before is taken before the first warm-up), and the net figures are less certain than they say",
		output.Watts(p[0]), output.Watts(p[1])), true
}
