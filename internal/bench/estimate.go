package bench

import (
	"github.com/exopower/exopower/internal/calibrate"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/wire"
)

// RunWallEstimated is a run's energy at the wall estimated from this
// Mac's calibration (exopower calibrate), where no plug is read: the
// fit's line of the run's own average power, held over its duration, as
// exopower run estimates a command. Not a measurement.
type RunWallEstimated struct {
	// EnergyJoules is over the run's span (DurationSeconds);
	// UncertaintyJoules the fit's RMS over it: a typical error, not a
	// bound.
	EnergyJoules      wire.Num `json:"energy_joules"`
	UncertaintyJoules wire.Num `json:"uncertainty_joules"`
	// NetEnergyJoules is the estimate less the idle power's estimate
	// over the run's duration; null without a baseline.
	NetEnergyJoules *wire.Num `json:"net_energy_joules"`
	// Extrapolated says the run's power was outside the range the
	// calibration's steps covered.
	Extrapolated bool `json:"extrapolated"`
}

// ResultWallEstimated is a command's runs at the wall, estimated.
type ResultWallEstimated struct {
	EnergyJoules *Spread `json:"energy_joules"`
	// UncertaintyJoules is the mean of the runs' uncertainties: the
	// fit's error is the same in every run, and more runs do not shrink
	// it.
	UncertaintyJoules wire.Num `json:"uncertainty_joules"`
	// NetEnergyJoules is the runs' net estimates; null without a
	// baseline.
	NetEnergyJoules *Spread `json:"net_energy_joules"`
	// EnergyPerUnitJoules is each run's estimate over its units of work;
	// null without units.
	EnergyPerUnitJoules *Spread `json:"energy_per_unit_joules"`
	// From is "system" or "soc": which of the Mac's powers the fit maps.
	From string `json:"from"`
	// Extrapolated says some run's power was outside the range the
	// calibration's steps covered.
	Extrapolated bool                 `json:"extrapolated"`
	Calibration  wire.WallCalibration `json:"calibration"`
}

// estimateRun is the run's estimate at the wall from c; ok is false
// where no window covered the run, or c has no fit for its source.
func estimateRun(c *calibrate.Calibration, run Run) (e calibrate.Estimate, ok bool) {
	secs := float64(run.DurationSeconds)
	covered := secs * float64(run.Coverage)
	if !(covered > 0) {
		return e, false
	}
	sys := run.EnergyJoules.System
	e, err := c.Estimate(secs, val(sys)/covered, sys != nil, float64(run.EnergyJoules.Total)/covered)
	return e, err == nil
}

// idleEstimate is the idle power at the wall that b's idle power gives
// through c, and which of the Mac's powers it maps: where the baseline
// has the whole Mac's, the system's fit, as for the runs.
func idleEstimate(c *calibrate.Calibration, b *Baseline) (watts float64, from string, ok bool) {
	if c == nil || b == nil {
		return 0, "", false
	}
	e, err := c.Estimate(1, val(b.SystemPowerWatts), b.SystemPowerWatts != nil, float64(b.PowerWatts))
	return e.AvgPowerWatts, e.From, err == nil
}

// finishWallEstimated fills in each run's estimate at the wall from the
// result's calibration, net of the baseline's estimate (nil: none), and
// their statistics, where every run has one: a mean over some runs
// would not be the command's.
func (r *Result) finishWallEstimated(b *Baseline, unit *string) {
	r.WallEstimated = nil
	if r.cal == nil || r.Wall != nil || len(r.Runs) == 0 {
		return
	}
	idle, idleFrom, hasIdle := idleEstimate(r.cal, b)
	var energy, unc, net, perUnit []float64
	w := &ResultWallEstimated{}
	for i := range r.Runs {
		run := &r.Runs[i]
		e, ok := estimateRun(r.cal, *run)
		if !ok {
			run.WallEstimated = nil
			continue
		}
		rw := &RunWallEstimated{EnergyJoules: wire.Num(e.Joules), UncertaintyJoules: wire.Num(e.UncertaintyJoules), Extrapolated: e.Extrapolated}
		if hasIdle && idleFrom == e.From {
			rw.NetEnergyJoules = num(e.Joules - idle*float64(run.DurationSeconds))
			net = append(net, float64(*rw.NetEnergyJoules))
		}
		if unit != nil && run.Units != nil {
			perUnit = append(perUnit, e.Joules/float64(*run.Units))
		}
		run.WallEstimated = rw
		energy, unc = append(energy, e.Joules), append(unc, e.UncertaintyJoules)
		w.From, w.Extrapolated = e.From, w.Extrapolated || e.Extrapolated
		w.Calibration = output.NewWallCalibration(e.Fit, r.cal)
	}
	if len(energy) != len(r.Runs) {
		return
	}
	w.EnergyJoules, w.UncertaintyJoules, w.EnergyPerUnitJoules = newSpread(energy), wire.Num(Summarize(unc).Mean), newSpread(perUnit)
	if len(net) == len(r.Runs) {
		w.NetEnergyJoules = newSpread(net)
	}
	r.WallEstimated = w
}
