package bench

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/wall"
	"github.com/exopower/exopower/internal/wire"
)

// WallMeter measures each run, and each piece of the idle baseline, at
// the wall too, with the metered plug of --wall, over the very span the
// Meter it wraps measured: the plug is read at each span's start (Mark)
// and once after its end (Session.Span), so that a reading holds each
// edge within a round trip whatever the polling interval.
type WallMeter struct {
	Meter
	plug *wall.Session
}

// NewWallMeter measures over m, and at the wall with plug, which is
// polling already: Close closes it.
func NewWallMeter(m Meter, plug *wall.Session) *WallMeter { return &WallMeter{Meter: m, plug: plug} }

// Begin reads the plug now, and opens the span.
func (w *WallMeter) Begin(ctx context.Context) error {
	w.plug.Mark()
	return w.Meter.Begin(ctx)
}

// End closes the span at at, and gives the run the plug's energy over
// the span the Meter measured.
func (w *WallMeter) End(ctx context.Context, at time.Time, status int, signal string) Run {
	run := w.Meter.End(ctx, at, status, signal)
	from := at.Add(-time.Duration(float64(run.DurationSeconds) * float64(time.Second)))
	sp := w.plug.Span(ctx, from, at)
	run.Wall = &RunWall{EnergyJoules: wire.Num(sp.Joules), UncertaintyJoules: wire.Num(sp.UncertaintyJoules),
		Method: sp.Method, Coverage: wire.Num(sp.Coverage), Polls: sp.Polls, Resets: sp.Resets}
	_, warnings := output.NewWall(sp, w.plug.Info(), w.plug.Interval(), 0)
	run.Warnings = append(run.Warnings, warnings...)
	return run
}

// Idle measures one piece of the idle span, and the plug's energy over
// the time it slept.
func (w *WallMeter) Idle(ctx context.Context, d time.Duration, sleep func(time.Duration) bool) (IdleSpan, error) {
	var from, to time.Time
	s, err := w.Meter.Idle(ctx, d, func(d time.Duration) bool {
		w.plug.Mark()
		from = time.Now()
		ok := sleep(d)
		if to = from.Add(d); !ok {
			to = time.Now()
		}
		return ok
	})
	if from.IsZero() || !to.After(from) {
		return s, err
	}
	sp := w.plug.Span(ctx, from, to)
	s.Wall = &WallPiece{Seconds: to.Sub(from).Seconds() * sp.Coverage, Joules: sp.Joules, UncertaintyJoules: sp.UncertaintyJoules}
	return s, err
}

// Source is the plug, for the report.
func (w *WallMeter) Source() *ReportWall {
	// The summary's wall figure names its plug: the same words here.
	fig, _ := output.NewWall(wall.Span{}, w.plug.Info(), w.plug.Interval(), 0)
	return &ReportWall{Source: fig.Source}
}

// Close lets go of the Meter's source and of the plug.
func (w *WallMeter) Close() (wire.Source, []string) {
	src, warnings := w.Meter.Close()
	w.plug.Close()
	return src, warnings
}

// ReportWall is the plug of --wall that measured a bench at the wall.
type ReportWall struct {
	Source wire.WallSource `json:"source"`
}

// RunWall is a run's energy at the wall: the Mac and whatever else is on
// the plug, its adapter's loss included.
type RunWall struct {
	// EnergyJoules is over the run's span (DurationSeconds);
	// UncertaintyJoules bounds its error from the plug's readings (not
	// its calibration, 1 to 2 % for most).
	EnergyJoules      wire.Num `json:"energy_joules"`
	UncertaintyJoules wire.Num `json:"uncertainty_joules"`
	// NetEnergyJoules is the energy less the idle wall power over the
	// run's duration; null without a baseline.
	NetEnergyJoules *wire.Num `json:"net_energy_joules"`
	// Method is "counter" or "power", as a summary's wall says.
	Method   string   `json:"method"`
	Coverage wire.Num `json:"coverage"`
	Polls    int      `json:"polls"`
	Resets   int      `json:"resets"`
}

// WallPiece is a piece of an idle span at the wall: the time the plug's
// readings covered, and its energy over it.
type WallPiece struct {
	Seconds, Joules, UncertaintyJoules float64
}

// IdleWall is the idle power at the wall, from every idle piece.
type IdleWall struct {
	// DurationSeconds is the idle time the plug's readings covered.
	DurationSeconds wire.Num `json:"duration_seconds"`
	PowerWatts      wire.Num `json:"power_watts"`
	// UncertaintyWatts bounds the error of the plug's readings in
	// PowerWatts; StandardErrorWatts is the spread of the pieces'
	// powers, null for fewer than two.
	UncertaintyWatts   wire.Num  `json:"uncertainty_watts"`
	StandardErrorWatts *wire.Num `json:"standard_error_watts"`
}

// NewIdleWall is the idle wall power of the pieces; nil unless every
// piece was measured at the wall.
func NewIdleWall(spans []IdleSpan) *IdleWall {
	var joules, unc, secs float64
	var v, w []float64
	for _, s := range spans {
		if s.Wall == nil {
			return nil
		}
		if s.Wall.Seconds > 0 {
			joules, unc, secs = joules+s.Wall.Joules, unc+s.Wall.UncertaintyJoules, secs+s.Wall.Seconds
			v, w = append(v, s.Wall.Joules/s.Wall.Seconds), append(w, s.Wall.Seconds)
		}
	}
	if !(secs > 0) {
		return nil
	}
	_, se := WeightedMean(v, w)
	return &IdleWall{DurationSeconds: wire.Num(secs), PowerWatts: wire.Num(joules / secs), UncertaintyWatts: wire.Num(unc / secs),
		StandardErrorWatts: num(se)}
}

// errorWatts is how far the idle wall power may be off: the plug's
// bound and the pieces' standard error.
func (iw *IdleWall) errorWatts() float64 {
	return float64(iw.UncertaintyWatts) + val(iw.StandardErrorWatts)
}

// ResultWall is a command's runs at the wall.
type ResultWall struct {
	EnergyJoules *Spread `json:"energy_joules"`
	// UncertaintyJoules is the mean of the runs' uncertainties: each
	// bounds the plug's error in a run, and as the same readings'
	// steps err alike in every run, more runs do not shrink it.
	UncertaintyJoules wire.Num `json:"uncertainty_joules"`
	// NetEnergyJoules is the runs' net energies; NetEnergyUncertainty
	// Joules what the idle wall power's error makes of their mean. Both
	// null without a baseline.
	NetEnergyJoules            *Spread   `json:"net_energy_joules"`
	NetEnergyUncertaintyJoules *wire.Num `json:"net_energy_uncertainty_joules"`
	// EnergyPerUnitJoules is each run's wall energy over its units of
	// work; null without units.
	EnergyPerUnitJoules *Spread `json:"energy_per_unit_joules"`
	// Method is "counter" or "power" where every run's was that, else
	// "counter and power".
	Method string `json:"method"`
	// Resolved is false where the plug cannot tell the runs' energy:
	// its uncertainty is more than a tenth of the mean, or the runs,
	// measured by its power readings, are shorter than two of a plug's
	// refreshes of its power (the warnings say which).
	Resolved bool `json:"resolved"`
}

// finishWall fills in the runs' net wall energies against the baseline
// (nil: none) and the statistics at the wall, where every run was
// measured there; it says when the plug's uncertainty swamps a run's
// energy.
func (r *Result) finishWall(b *Baseline, unit *string) {
	var energy, unc, net, perUnit []float64
	methods := map[string]bool{}
	uncovered := 0
	for i := range r.Runs {
		run := &r.Runs[i]
		if run.Wall == nil {
			return
		}
		if run.Wall.Coverage < MinWallCoverage {
			// The plug did not answer over it: its 0 J is no
			// measurement, and is left out, as the Mac's own gaps are
			// never filled with zeros.
			uncovered++
			continue
		}
		e := float64(run.Wall.EnergyJoules)
		energy, unc = append(energy, e), append(unc, float64(run.Wall.UncertaintyJoules))
		if run.Wall.Method == "mixed" {
			// Several nodes' plugs, some by their counter and some by
			// their power.
			methods[wall.MethodCounter], methods[wall.MethodPower] = true, true
		} else {
			methods[run.Wall.Method] = true
		}
		if b != nil && b.Wall != nil {
			run.Wall.NetEnergyJoules = num(e - float64(b.Wall.PowerWatts)*float64(run.DurationSeconds))
			net = append(net, float64(*run.Wall.NetEnergyJoules))
		}
		if unit != nil && run.Units != nil {
			perUnit = append(perUnit, e/float64(*run.Units))
		}
	}
	if uncovered > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("at the wall, the plug's readings covered less than %s of %d of the %d runs (it did not answer, or its readings stood still): "+
			"those runs are left out of the wall's figures", output.Percent(MinWallCoverage), uncovered, len(r.Runs)))
	}
	if len(energy) == 0 {
		return
	}
	w := &ResultWall{EnergyJoules: newSpread(energy), UncertaintyJoules: wire.Num(Summarize(unc).Mean),
		NetEnergyJoules: newSpread(net), EnergyPerUnitJoules: newSpread(perUnit), Method: wall.MethodCounter}
	switch {
	case methods[wall.MethodCounter] && methods[wall.MethodPower]:
		w.Method = "counter and power"
	case methods[wall.MethodPower]:
		w.Method = wall.MethodPower
	}
	if w.NetEnergyJoules != nil {
		w.NetEnergyUncertaintyJoules = num(b.Wall.errorWatts() * float64(r.DurationSeconds.Mean))
	}
	doubts := w.doubts(float64(r.DurationSeconds.Mean))
	w.Resolved = len(doubts) == 0 && uncovered == 0
	r.Wall = w
	r.Warnings = append(r.Warnings, doubts...)
}

// MinWallCoverage is the share of a run that the plug's readings must
// cover for its wall energy to count (in the figures, and in a
// picture of the runs).
const MinWallCoverage = 0.9

// wallDoubt is the share of a run's mean wall energy that the plug's
// uncertainty may be before the wall's figure is said to be no
// measurement of the command.
const wallDoubt = 0.1

// plugRefresh is how often a plug refreshes the power it reports (about
// once a second: what wall.DefaultInterval polls at). A reading is the
// plug's last, not the power at the instant it is read: over a span of
// a refresh or two, the power readings around it say what the plug saw
// before, not what the span drew, whatever their spread.
const plugRefresh = wall.DefaultInterval

// doubts say where the plug cannot resolve the runs of secs on average:
// its uncertainty is a large share of their energy, or they are too
// short for its power readings to see them.
func (w *ResultWall) doubts(secs float64) []string {
	var d []string
	mean, unc := float64(w.EnergyJoules.Mean), float64(w.UncertaintyJoules)
	if w.Method != wall.MethodCounter && secs < 2*plugRefresh.Seconds() {
		d = append(d, fmt.Sprintf("at the wall, runs of %s are shorter than two of a plug's refreshes of its power (about a second each): "+
			"their energy there is the power the plug read around them held over them, not theirs; more work per run, seconds of it, measures it",
			output.Seconds(secs)))
	}
	if unc > wallDoubt*math.Abs(mean) {
		d = append(d, fmt.Sprintf("at the wall, a run's %s is known to ± %s only (%s of it): the plug's counts and readings are coarse against it; "+
			"more work per run measures it", output.Joules(mean), output.Joules(unc), output.Percent(unc/math.Max(math.Abs(mean), 1e-12))))
	}
	return d
}
