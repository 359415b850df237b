package llm

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/exopower/exopower/internal/bench"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/wall"
	"github.com/exopower/exopower/internal/wire"
)

// AtWall has the meter read plug (--wall), which is polling already,
// over each setting's run and each idle span; Close closes it.
func (m *Meter) AtWall(plug *wall.Session) { m.plug = plug }

// mark reads the plug now, at a span's start, so that a reading holds
// the start within a round trip.
func (m *Meter) mark() { m.plug.Mark() }

// addWall gives sum, the run's summary over [from, to], the plug's
// energy over it and its warnings.
func (m *Meter) addWall(ctx context.Context, sum *wire.Summary, from, to time.Time) {
	if m.plug == nil || sum == nil {
		return
	}
	// The summary's own span: this Mac's, which began once its first
	// window came, after the run's start; the wall over the same time as
	// the figures beside it.
	if t, err := time.Parse(time.RFC3339Nano, sum.StartedAt); err == nil && t.After(from) && t.Before(to) {
		from = t
	}
	var warnings []string
	sum.Wall, warnings = output.NewWall(m.plug.Span(ctx, from, to), m.plug.Info(), m.plug.Interval(), to.Sub(from).Seconds())
	sum.Warnings = append(sum.Warnings, warnings...)
}

// wallIdle is the idle power at the wall over the idle spans: from the
// plug of --wall, or over --node the nodes' plugs (nodesWallIdle); nil
// without, or unless each span was measured there. The plug has been
// read after each span's end: the runs came after.
func (m *Meter) wallIdle(idle []span) *bench.IdleWall {
	if m.plug == nil {
		return m.nodesWallIdle()
	}
	var pieces []bench.IdleSpan
	for _, s := range idle {
		sp := m.plug.Span(context.Background(), s.from, s.to)
		pieces = append(pieces, bench.IdleSpan{Start: s.from,
			Wall: &bench.WallPiece{Seconds: s.to.Sub(s.from).Seconds() * sp.Coverage, Joules: sp.Joules, UncertaintyJoules: sp.UncertaintyJoules}})
	}
	return bench.NewIdleWall(pieces)
}

// RunWall is a setting's run at the wall: its energy is the run's
// summary's wall figure.
type RunWall struct {
	// JoulesPerOutputToken is the wall energy over the completion
	// tokens, UncertaintyJoulesPerOutputToken the plug's uncertainty
	// over them; null without a token.
	JoulesPerOutputToken            *wire.Num `json:"joules_per_output_token"`
	UncertaintyJoulesPerOutputToken *wire.Num `json:"uncertainty_joules_per_output_token"`
	// NetEnergyJoules is the energy less the idle wall power over the
	// run, NetEnergyUncertaintyJoules the plug's uncertainty and the
	// idle power's error over it; NetJoulesPerOutputToken the net over
	// the tokens. Null without a baseline.
	NetEnergyJoules            *wire.Num `json:"net_energy_joules"`
	NetEnergyUncertaintyJoules *wire.Num `json:"net_energy_uncertainty_joules"`
	NetJoulesPerOutputToken    *wire.Num `json:"net_joules_per_output_token"`
	// Resolved is false where the plug cannot tell the run's energy (the
	// warnings say why).
	Resolved bool `json:"resolved"`
}

// runWall is the run's figures at the wall, against the baseline (nil:
// none); nil without --wall.
func (res *Result) runWall(b *Baseline) *RunWall {
	run := res.Run
	w := run.Summary.Wall
	if w == nil {
		return nil
	}
	e, u, secs, n := float64(w.EnergyJoules), float64(w.UncertaintyJoules), float64(run.Summary.DurationSeconds), float64(run.CompletionTokens)
	per := func(j float64) *wire.Num {
		if n > 0 {
			return num(j / n)
		}
		return nil
	}
	rw := &RunWall{JoulesPerOutputToken: per(e), UncertaintyJoulesPerOutputToken: per(u)}
	if b != nil && b.Wall != nil {
		idle := float64(b.Wall.PowerWatts)
		errW := float64(b.Wall.UncertaintyWatts)
		if se := b.Wall.StandardErrorWatts; se != nil {
			errW += float64(*se)
		}
		rw.NetEnergyJoules, rw.NetEnergyUncertaintyJoules = num(e-idle*secs), num(u+errW*secs)
		rw.NetJoulesPerOutputToken = per(e - idle*secs)
	}
	rw.Resolved = len(wallDoubts(w, secs)) == 0
	return rw
}

// wallDoubt is the share of the run's wall energy that the plug's
// uncertainty may be before the figure is said to be unresolved.
const wallDoubt = 0.1

// wallDoubts say where the plug cannot tell a run of secs: its
// uncertainty is a large share of the energy, or the run is shorter
// than two of a plug's refreshes of its power (about a second each), so
// that its power readings say what the plug saw before, not the run.
func wallDoubts(w *wire.Wall, secs float64) []string {
	var d []string
	if w.Method != wall.MethodCounter && secs < 2*wall.DefaultInterval.Seconds() {
		d = append(d, fmt.Sprintf("at the wall, the run of %s is shorter than two of a plug's refreshes of its power (about a second each): "+
			"its energy there is the power the plug read around it; more requests (-r, --duration) measure it", output.Seconds(secs)))
	}
	if e, u := float64(w.EnergyJoules), float64(w.UncertaintyJoules); u > wallDoubt*math.Abs(e) {
		d = append(d, fmt.Sprintf("at the wall, the run's %s is known to ± %s only: the plug's counts and readings are coarse against it; "+
			"more requests (-r, --duration) measure it", output.Joules(e), output.Joules(u)))
	}
	return d
}
