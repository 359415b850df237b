package apps

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// Snapshot is the last Round as a screen draws it: every figure copied,
// the apps and their processes sorted. The zero Snapshot before the
// first Round.
func (p *Poller) Snapshot() Snapshot {
	if p.seq == 0 {
		return Snapshot{}
	}
	r := p.prev
	s := Snapshot{
		Seq: p.seq, Start: p.before, End: r.At, Since: p.first.At, AllUsers: p.cfg.AllUsers,
		Forgotten: p.forgotten, Processes: p.counts, CPUScale: p.scale, Warnings: slices.Clone(p.warnings),
		Mac: Rails{Has: r.Has, Energy: r.Energy.Sub(p.first.Energy)},
	}
	s.Scope = "soc"
	if r.Has.System {
		s.Scope = "system"
	}
	if r.Wall != nil {
		w := *r.Wall
		s.Wall = &w
	}
	dt := r.At.Sub(s.Start)
	s.Mac.Power = p.dE.Scale(perSecond(dt))
	s.Rest = Rest{Power: p.round.scale(perSecond(dt)), Energy: p.rest}
	s.Apps = p.appsOf(perSecond(dt))
	return s
}

// perSecond is 1/dt, 0 for no time: a power over no time is none.
func perSecond(dt time.Duration) float64 {
	if dt <= 0 {
		return 0
	}
	return 1 / dt.Seconds()
}

func (f Figures) scale(k float64) Figures { return Figures{f.CPU * k, f.GPU * k} }

func (r RestFigures) scale(k float64) RestFigures {
	return RestFigures{r.CPU * k, r.GPU * k, r.ANE * k, r.DRAM * k, r.System * k, r.Total * k}
}

// appsOf is every app worth a row, with its processes, sorted.
func (p *Poller) appsOf(k float64) []App {
	byApp := make(map[*app][]Process, len(p.apps))
	for _, pr := range p.procs {
		byApp[pr.app] = append(byApp[pr.app], Process{Pid: pr.pid, Name: pr.name, UID: pr.uid, Readable: pr.readable,
			Power: pr.round.scale(k), Energy: pr.energy})
	}
	out := make([]App, 0, len(p.apps))
	for _, a := range p.apps {
		ps := byApp[a]
		row := App{Name: a.name, Pid: a.pid, Power: a.round.scale(k), Energy: a.energy, Processes: ps, Gone: a.live == 0}
		for _, pr := range ps {
			if !pr.Readable {
				row.NotReadable++
			}
		}
		if row.NotReadable == len(ps) && a.energy == (Figures{}) && a.round == (Figures{}) {
			continue // another user's alone, and nothing known of it
		}
		slices.SortFunc(row.Processes, func(x, y Process) int {
			return byPower(x.Power, y.Power, x.Energy, y.Energy, cmp.Compare(x.Pid, y.Pid))
		})
		out = append(out, row)
	}
	slices.SortFunc(out, func(x, y App) int {
		return byPower(x.Power, y.Power, x.Energy, y.Energy, cmp.Compare(x.Name, y.Name))
	})
	return out
}

// byPower orders by power, highest first, then by energy, then by
// tie.
func byPower(px, py, ex, ey Figures, tie int) int {
	if c := cmp.Compare(micro(py.Total()), micro(px.Total())); c != 0 {
		return c
	}
	if c := cmp.Compare(micro(ey.Total()), micro(ex.Total())); c != 0 {
		return c
	}
	return tie
}

// micro is x to a millionth: processes of the same power differ in the
// last bits of their shares of a rail, which would have them change
// places at every refresh; the tie goes to the pid or name instead.
func micro(x float64) float64 { return math.Round(x * 1e6) }
