package llm

import (
	"fmt"

	"github.com/exopower/exopower/internal/calibrate"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/wire"
)

// EstimateWall has the meter estimate each setting's run at the wall
// from c, this Mac's calibration, held to the Mac and its source
// already (nil: none), where no plug is read and this Mac alone is
// measured: a node's fit is its own. refused, where not "", says why
// no calibration is used, once in the report's warnings.
func (m *Meter) EstimateWall(c *calibrate.Calibration, refused string) {
	if refused != "" {
		m.note(refused)
	}
	if len(m.members) == 1 && m.local != nil {
		m.cal = c
	}
}

// addWallEstimate gives sum, the run's summary, the wall estimated from
// the calibration, as exopower run estimates a command's, where no plug
// read it.
func (m *Meter) addWallEstimate(sum *wire.Summary) {
	if m.cal == nil || m.plug != nil || sum == nil {
		return
	}
	if err := output.EstimateWall(sum, m.cal); err != nil {
		sum.Warnings = append(sum.Warnings, "no wall (estimated): "+err.Error())
	}
}

// wallIdleEstimated is the idle power at the wall that the baseline's
// idle power gives through the calibration, and which of the Mac's
// powers the fit maps; nil without a calibration.
func (m *Meter) wallIdleEstimated(b *Baseline) (*wire.Num, string) {
	if m.cal == nil || m.plug != nil || b == nil {
		return nil, ""
	}
	e, err := m.cal.Estimate(1, val(b.SystemPowerWatts), b.SystemPowerWatts != nil, float64(b.PowerWatts))
	if err != nil {
		return nil, ""
	}
	return num(e.AvgPowerWatts), e.From
}

// RunWallEstimated is a setting's run at the wall, estimated from this
// Mac's calibration: its energy is the run's summary's wall_estimated.
// Not a measurement.
type RunWallEstimated struct {
	// JoulesPerOutputToken is the estimate over the completion tokens,
	// UncertaintyJoulesPerOutputToken the fit's RMS over the run, over
	// them; null without a token.
	JoulesPerOutputToken            *wire.Num `json:"joules_per_output_token"`
	UncertaintyJoulesPerOutputToken *wire.Num `json:"uncertainty_joules_per_output_token"`
	// NetEnergyJoules is the estimate less the idle power's estimate
	// over the run, NetEnergyUncertaintyJoules what the idle power's
	// standard error makes of it through the fit's slope;
	// NetJoulesPerOutputToken the net over the tokens. Null without a
	// baseline.
	NetEnergyJoules            *wire.Num `json:"net_energy_joules"`
	NetEnergyUncertaintyJoules *wire.Num `json:"net_energy_uncertainty_joules"`
	NetJoulesPerOutputToken    *wire.Num `json:"net_joules_per_output_token"`
}

// runWallEstimated is the run's figures at the wall, estimated, against
// the baseline (nil: none); nil without an estimate.
func (res *Result) runWallEstimated(b *Baseline) *RunWallEstimated {
	run := res.Run
	e := run.Summary.WallEstimated
	if e == nil {
		return nil
	}
	j, u, secs, n := float64(e.EnergyJoules), float64(e.UncertaintyJoules), float64(run.Summary.DurationSeconds), float64(run.CompletionTokens)
	per := func(j float64) *wire.Num {
		if n > 0 {
			return num(j / n)
		}
		return nil
	}
	rw := &RunWallEstimated{JoulesPerOutputToken: per(j), UncertaintyJoulesPerOutputToken: per(u)}
	if b == nil || b.WallEstimatedPowerWatts == nil || b.wallEstimatedFrom != e.From {
		return rw
	}
	idle := b.soc(-1)
	if e.From == calibrate.FromSystem {
		idle = b.system(-1)
	}
	net := j - float64(*b.WallEstimatedPowerWatts)*secs
	rw.NetEnergyJoules, rw.NetJoulesPerOutputToken = num(net), per(net)
	rw.NetEnergyUncertaintyJoules = num(float64(e.Calibration.Slope) * idle.se * secs)
	return rw
}

// estimatedRow is the whole run's figure at the wall as estimated, gross
// or net, marked as an estimate with its calibration; ok is false
// without one, or without a net figure when net.
func estimatedRow(r Result, net bool) (row, bool) {
	run := r.Run
	if run == nil || run.Summary == nil || run.Summary.WallEstimated == nil || run.WallEstimated == nil {
		return row{}, false
	}
	e, rw := run.Summary.WallEstimated, run.WallEstimated
	j, u, per, what := float64(e.EnergyJoules), float64(e.UncertaintyJoules), rw.JoulesPerOutputToken, "energy"
	if net {
		if rw.NetEnergyJoules == nil {
			return row{}, false
		}
		j, u, per, what = float64(*rw.NetEnergyJoules), val(rw.NetEnergyUncertaintyJoules), rw.NetJoulesPerOutputToken, "net energy"
	}
	after := fmt.Sprintf("(whole run, %s %s ± %s, not measured: from this Mac's calibration of %s, RMS %s", what, output.Joules(j), output.Joules(u),
		output.CalibrationDay(e.Calibration.CalibratedAt), output.Watts(float64(e.Calibration.RMSWatts)))
	if e.Extrapolated {
		after += "; extrapolated: the Mac's power was outside the calibration's range"
	}
	return row{"At the wall (estimated):", fmt.Sprintf("%s per output token", perToken(val(per))), after + ")"}, true
}
