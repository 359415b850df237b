package apps

import (
	"cmp"
	"slices"
	"time"

	"github.com/exopower/exopower/internal/power"
)

// split shares the energy dE of a round out among the processes read:
// the CPU's as the kernel counted it (scaled down to the rail where it
// added up to more), the GPU's by each process's share of the GPU's time
// in the round; what is left of every rail is the remainder.
func (p *Poller) split(dE power.Values, has power.Reported) {
	var rawNJ uint64
	var gpuAll time.Duration
	for _, pr := range p.procs {
		rawNJ += pr.rawNJ
		gpuAll += pr.gpuTime
	}
	raw := float64(rawNJ) / 1e9
	if raw > dE.CPU {
		p.scale = max(dE.CPU, 0) / raw
	}
	var sum Figures
	for _, pr := range p.procs {
		f := Figures{CPU: float64(pr.rawNJ) / 1e9 * p.scale}
		if gpuAll > 0 && pr.gpuTime > 0 {
			f.GPU = dE.GPU * (float64(pr.gpuTime) / float64(gpuAll))
		}
		pr.round = f
		pr.energy = pr.energy.add(f)
		pr.app.round = pr.app.round.add(f)
		pr.app.energy = pr.app.energy.add(f)
		sum = sum.add(f)
	}
	p.restOf(dE, has, sum)
}

// toRest gives the whole of a round's energy to the remainder, where
// the processes could not be read: their energy meanwhile is counted
// at the next round that reads them.
func (p *Poller) toRest(dE power.Values, has power.Reported) {
	for _, pr := range p.procs {
		pr.round = Figures{}
	}
	p.restOf(dE, has, Figures{})
}

// restOf is the remainder of a round whose processes took apps: every
// rail less what they took of it. The CPU's and the GPU's are never
// below 0 (a rounding of the scaled shares), so that a counter of them
// never goes back.
func (p *Poller) restOf(dE power.Values, has power.Reported, apps Figures) {
	r := RestFigures{CPU: max(dE.CPU-apps.CPU, 0), GPU: max(dE.GPU-apps.GPU, 0), ANE: dE.ANE}
	if has.System {
		r.DRAM = dE.DRAM
		r.System = dE.System - dE.CPU - dE.GPU - dE.ANE - dE.DRAM
	}
	r.Total = r.CPU + r.GPU + r.ANE + r.DRAM + r.System
	p.round = r
	p.rest = p.rest.add(r)
}

func (r RestFigures) add(s RestFigures) RestFigures {
	return RestFigures{r.CPU + s.CPU, r.GPU + s.GPU, r.ANE + s.ANE, r.DRAM + s.DRAM, r.System + s.System, r.Total + s.Total}
}

// forget lets go of the apps whose processes have all been gone for
// Config.Forget (and at once of those that never had any energy): their
// energy joins Forgotten. Every app's round, for Series, is noted
// meanwhile.
func (p *Poller) forget(now time.Time) {
	p.rounds, p.gone = p.rounds[:0], p.gone[:0]
	for name, a := range p.apps {
		gone := a.live == 0
		forgotten := gone && (a.energy == Figures{} || p.cfg.Forget > 0 && now.Sub(a.goneAt) >= p.cfg.Forget)
		p.rounds = append(p.rounds, AppRound{Name: name, Round: a.round, Energy: a.energy, Forgotten: forgotten})
		switch {
		case forgotten:
			p.forgotten = p.forgotten.add(a.energy)
			delete(p.apps, name)
		case gone:
			p.gone = append(p.gone, goneApp{a, len(p.rounds) - 1})
		}
	}
	p.forgetBeyond(cmp.Or(p.cfg.MaxGone, DefaultMaxGone))
}

// goneApp is an app all gone, and its place in the round's apps.
type goneApp struct {
	a *app
	i int
}

// forgetBeyond forgets the apps all gone beyond the max kept, the
// longest gone first.
func (p *Poller) forgetBeyond(keep int) {
	if len(p.gone) <= keep {
		return
	}
	slices.SortFunc(p.gone, func(x, y goneApp) int { return x.a.goneAt.Compare(y.a.goneAt) })
	for _, g := range p.gone[:len(p.gone)-keep] {
		p.rounds[g.i].Forgotten = true
		p.forgotten = p.forgotten.add(g.a.energy)
		delete(p.apps, g.a.name)
	}
}

// Apps is what the last Round gave each app, every app once, those it
// forgot included: for Series. The slice is the Poller's, valid until
// the next Round.
func (p *Poller) Apps() []AppRound { return p.rounds }

// Rest is the last Round's remainder, in joules.
func (p *Poller) Rest() RestFigures { return p.round }

// Counts counts the processes of the last Round.
func (p *Poller) Counts() Counts { return p.counts }
