package bench

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/exopower/exopower/internal/calibrate"
	"github.com/exopower/exopower/internal/cost"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/sampler"
	"github.com/exopower/exopower/internal/wire"
)

// Result is one command's runs and their statistics.
//
// Its first fields are hyperfine's, with their meaning, so that the
// tools written for hyperfine's --export-json read exopower's: Mean,
// Stddev, Median, Min and Max are of the runs' wall-clock times (Times,
// as hyperfine measures them: from the command's start to its end), and
// User and System the mean CPU time of the command and what it waited
// for, all in seconds.
type Result struct {
	Command string `json:"command"`
	// Mean, Median, Min and Max are null without a run; Stddev (n-1)
	// with fewer than two, as hyperfine's.
	Mean   *wire.Num `json:"mean"`
	Stddev *wire.Num `json:"stddev"`
	Median *wire.Num `json:"median"`
	User   *wire.Num `json:"user"`
	System *wire.Num `json:"system"`
	Min    *wire.Num `json:"min"`
	Max    *wire.Num `json:"max"`
	// Times are the runs' wall-clock times (Run.WallSeconds), in order.
	Times []wire.Num `json:"times"`
	// Parameters are the -L values substituted into the command.
	Parameters map[string]string `json:"parameters"`
	Runs       []Run             `json:"runs"`
	ExitCodes  []int             `json:"exit_codes"`
	// The statistics of the runs; null when there was none.
	EnergyJoules    *Spread `json:"energy_joules"`
	NetEnergyJoules *Spread `json:"net_energy_joules"`
	// SystemEnergyJoules and NetSystemEnergyJoules are the same of the
	// whole Mac's energy (energy_joules.system), where the source reads
	// the SMC; null otherwise.
	SystemEnergyJoules    *Spread `json:"system_energy_joules"`
	NetSystemEnergyJoules *Spread `json:"net_system_energy_joules"`
	AvgPowerWatts         *Spread `json:"avg_power_watts"`
	DurationSeconds       *Spread `json:"duration_seconds"`
	// NetEnergyUncertaintyJoules is what the idle power's standard error
	// makes of the mean net energy: it shifts every run alike, so more
	// runs do not shrink it.
	NetEnergyUncertaintyJoules *wire.Num `json:"net_energy_uncertainty_joules"`
	// RelativeEnergy is the mean energy over the reference's, with its
	// propagated error; null when there is nothing to compare.
	RelativeEnergy       *wire.Num `json:"relative_energy"`
	RelativeEnergyStddev *wire.Num `json:"relative_energy_stddev"`
	// EnergyPerUnitJoules is each run's energy over its units of work
	// (--units, --units-from), and UnitsPerJoule its inverse, over the
	// runs that have units; null without units.
	EnergyPerUnitJoules *Spread `json:"energy_per_unit_joules"`
	UnitsPerJoule       *Spread `json:"units_per_joule"`
	// RunsWithoutUnits counts the runs whose output --units-from did not
	// read a count from.
	RunsWithoutUnits int      `json:"runs_without_units"`
	Warnings         []string `json:"warnings"`
	// CommandEnergyJoules is the statistics of the runs' own processes'
	// energy (--attribute: attribution.energy_joules.command of each
	// run); absent without.
	CommandEnergyJoules *Spread `json:"command_energy_joules,omitempty"`
	// Wall is the runs' energy at the wall (--wall); null without, or
	// where a run was not measured there.
	Wall *ResultWall `json:"wall"`
	// WallEstimated is the runs' energy at the wall estimated from this
	// Mac's calibration, where no plug is read; null without one (or
	// with --wall or --node), or where a run has none.
	WallEstimated *ResultWallEstimated `json:"wall_estimated"`
	// Cost is the mean run priced at --price, and per unit of work with
	// units; CO2e the same at --carbon-intensity or --grid. Each null
	// without its figure.
	Cost *ResultCost `json:"cost"`
	CO2e *ResultCO2e `json:"co2e"`

	unit  string                 // the unit of work's name, for the text
	label string                 // Job.Label: the name the text and the tables show
	cal   *calibrate.Calibration // Config.Calibration: this Mac's, for the estimate at the wall
	rates cost.Rates             // Config.Rates: what to price the runs at
}

// Label is the name that the text and the tables show: the command's
// name with the parameters it does not use, as hyperfine shows it
// ("echo test (branch = master)"), or its name alone.
func (r Result) Label() string {
	if r.label != "" {
		return r.label
	}
	return r.Command
}

// Run is one measured run.
type Run struct {
	StartedAt string `json:"started_at"`
	// DurationSeconds is the span measured, whose energy EnergyJoules is.
	DurationSeconds wire.Num `json:"duration_seconds"`
	// WallSeconds is the command's time from its start to its end, as
	// hyperfine measures it; UserSeconds and SystemSeconds are the CPU
	// time that it, and the processes it waited for, spent in user mode
	// and in the kernel (its rusage).
	WallSeconds   wire.Num        `json:"wall_seconds"`
	UserSeconds   wire.Num        `json:"user_seconds"`
	SystemSeconds wire.Num        `json:"system_seconds"`
	EnergyJoules  wire.Components `json:"energy_joules"`
	// NetEnergyJoules is the energy less the idle power over the run's
	// duration, and NetEnergyUncertaintyJoules the idle power's standard
	// error over it; null without a baseline.
	NetEnergyJoules            *wire.Num `json:"net_energy_joules"`
	NetEnergyUncertaintyJoules *wire.Num `json:"net_energy_uncertainty_joules"`
	// NetSystemEnergyJoules is the whole Mac's energy less its idle
	// power over the run's duration; null without a baseline or the
	// system's power.
	NetSystemEnergyJoules *wire.Num       `json:"net_system_energy_joules"`
	AvgPowerWatts         wire.Components `json:"avg_power_watts"`
	Samples               int             `json:"samples"`
	Coverage              wire.Num        `json:"coverage"`
	ExitCode              int             `json:"exit_code"`
	// Signal names the signal that ended the command, or is null.
	Signal *string `json:"signal"`
	// Units is the run's count of units of work (--units, or read by
	// --units-from from its output); null without, or when unread.
	Units *wire.Num `json:"units"`
	// Nodes are the run's span on each node of --node, whose sum the
	// run's energy is; null for this Mac alone.
	Nodes    []wire.NodeSummary `json:"nodes"`
	Warnings []string           `json:"warnings"`
	// Attribution is the run's own processes' energy (--attribute),
	// as run --attribute gives it; absent without.
	Attribution *wire.Attribution `json:"attribution,omitempty"`
	// Wall is the run's energy at the wall (--wall); null without.
	Wall *RunWall `json:"wall"`
	// WallEstimated is the run's energy at the wall estimated from this
	// Mac's calibration, where no plug is read; null without one.
	WallEstimated *RunWallEstimated `json:"wall_estimated"`
}

// NewRun describes a measured run: what the span measured, its wall-clock
// start, and how the command ended.
func NewRun(r sampler.Result, started time.Time, status int, signal string) Run {
	run := Run{
		StartedAt:       started.UTC().Format(time.RFC3339Nano),
		DurationSeconds: wire.Num(r.Duration.Seconds()),
		EnergyJoules:    wire.NewComponents(r.Energy, r.Has),
		AvgPowerWatts:   wire.NewComponents(r.Average, r.Has),
		Samples:         r.Samples,
		Coverage:        wire.Num(r.Coverage),
		ExitCode:        status,
		Warnings:        r.Warnings,
	}
	if signal != "" {
		run.Signal = &signal
	}
	if run.Warnings == nil {
		run.Warnings = []string{}
	}
	return run
}

// NewClusterRun describes a run measured over several nodes: sum is
// their total, its Nodes each node's span.
func NewClusterRun(sum *wire.Summary, status int, signal string) Run {
	run := Run{
		StartedAt:       sum.StartedAt,
		DurationSeconds: sum.DurationSeconds,
		EnergyJoules:    sum.EnergyJoules,
		AvgPowerWatts:   sum.AvgPowerWatts,
		Samples:         sum.Samples,
		Coverage:        sum.Coverage,
		ExitCode:        status,
		Warnings:        append([]string{}, sum.Warnings...),
		Nodes:           sum.Nodes,
	}
	if signal != "" {
		run.Signal = &signal
	}
	if w := sum.Wall; w != nil {
		// The nodes' plugs, as each node's serve reads its own (serve
		// --wall), summed each plug once.
		run.Wall = &RunWall{EnergyJoules: w.EnergyJoules, UncertaintyJoules: w.UncertaintyJoules, Method: w.Method, Coverage: w.Coverage, Polls: w.Polls, Resets: w.Resets}
	}
	return run
}

// Spread is the statistics of one quantity over the runs, in its unit.
type Spread struct {
	Mean wire.Num `json:"mean"`
	// Stddev is the sample's (n-1); null for one run.
	Stddev *wire.Num `json:"stddev"`
	Median wire.Num  `json:"median"`
	Min    wire.Num  `json:"min"`
	Max    wire.Num  `json:"max"`
}

func newSpread(xs []float64) *Spread {
	if len(xs) == 0 {
		return nil
	}
	st := Summarize(xs)
	return &Spread{Mean: wire.Num(st.Mean), Stddev: num(st.Stddev), Median: wire.Num(st.Median),
		Min: wire.Num(st.Min), Max: wire.Num(st.Max)}
}

// finish fills in the statistics of the runs and the net energies
// against the baseline (nil: none), and warns about what makes the
// numbers doubtful. interval is the sample interval.
func (r *Result) finish(b *Baseline, interval time.Duration, unit *string) {
	r.ExitCodes = []int{}
	r.Times = []wire.Num{}
	var energy, power, dur, net, system, netSystem, wall, user, sys []float64
	for i := range r.Runs {
		run := &r.Runs[i]
		r.ExitCodes = append(r.ExitCodes, run.ExitCode)
		r.Times = append(r.Times, run.WallSeconds)
		wall = append(wall, float64(run.WallSeconds))
		user, sys = append(user, float64(run.UserSeconds)), append(sys, float64(run.SystemSeconds))
		energy = append(energy, float64(run.EnergyJoules.Total))
		power = append(power, float64(run.AvgPowerWatts.Total))
		dur = append(dur, float64(run.DurationSeconds))
		d := float64(run.DurationSeconds)
		if b != nil {
			run.NetEnergyJoules = num(float64(run.EnergyJoules.Total) - float64(b.PowerWatts)*d)
			run.NetEnergyUncertaintyJoules = num(b.errorWatts() * d)
			net = append(net, float64(*run.NetEnergyJoules))
		}
		if s := run.EnergyJoules.System; s != nil {
			system = append(system, float64(*s))
			if b != nil && b.SystemPowerWatts != nil {
				run.NetSystemEnergyJoules = num(float64(*s) - float64(*b.SystemPowerWatts)*d)
				netSystem = append(netSystem, float64(*run.NetSystemEnergyJoules))
			}
		}
	}
	r.EnergyJoules, r.AvgPowerWatts, r.DurationSeconds = newSpread(energy), newSpread(power), newSpread(dur)
	t := Summarize(wall)
	r.Mean, r.Stddev, r.Median, r.Min, r.Max = num(t.Mean), num(t.Stddev), num(t.Median), num(t.Min), num(t.Max)
	r.User, r.System = num(Summarize(user).Mean), num(Summarize(sys).Mean)
	r.NetEnergyJoules = newSpread(net)
	r.CommandEnergyJoules = r.commandEnergy()
	// The system's only where every run has it: a mean over some runs
	// would not be the command's.
	if len(system) == len(r.Runs) {
		r.SystemEnergyJoules = newSpread(system)
	}
	if len(netSystem) == len(r.Runs) {
		r.NetSystemEnergyJoules = newSpread(netSystem)
	}
	if r.NetEnergyJoules != nil {
		r.NetEnergyUncertaintyJoules = num(b.errorWatts() * float64(r.DurationSeconds.Mean))
	}
	// An empty list, not null, where there is nothing to warn of.
	r.Warnings = append(r.Warnings, r.doubts(energy, interval)...)
	if r.Warnings == nil {
		r.Warnings = []string{}
	}
	if unit != nil {
		r.unit = *unit
		r.perUnit(*unit)
	}
	r.finishWall(b, unit)
	r.finishWallEstimated(b, unit)
	r.finishCost()
}

// commandEnergy is the statistics of the runs' own processes' energy,
// where every run has it.
func (r *Result) commandEnergy() *Spread {
	var own []float64
	for _, run := range r.Runs {
		if run.Attribution != nil {
			own = append(own, float64(run.Attribution.EnergyJoules.Command))
		}
	}
	if len(own) != len(r.Runs) {
		return nil
	}
	return newSpread(own)
}

// Preview is r with the statistics known once its runs are done, before
// the closing baseline: all but its net energies, which need that
// baseline, and its ratio to the reference, which needs every command.
// interval is the sample interval, unit names the unit of work (nil:
// none). r itself is left as it is.
func (r Result) Preview(interval time.Duration, unit *string) Result {
	// The runs too: finish gives each its estimate at the wall.
	r.Warnings, r.Runs = slices.Clone(r.Warnings), slices.Clone(r.Runs)
	r.finish(nil, interval, unit)
	return r
}

// doubts are the warnings about a command's runs.
func (r *Result) doubts(energy []float64, interval time.Duration) []string {
	var w []string
	floor := 0.0
	if r.EnergyJoules != nil {
		floor = SpreadFloor(float64(r.EnergyJoules.Mean), float64(r.DurationSeconds.Mean), float64(r.AvgPowerWatts.Mean))
	}
	if out := Outliers(energy, floor); len(out) > 0 {
		w = append(w, fmt.Sprintf("%s of %d used an energy far from the others (modified Z-score beyond %.1f): "+
			"something else may have run; more runs, or a quieter Mac, make the mean firmer", output.Count(len(out), "run"), len(energy), OutlierThreshold))
	}
	short, thin, failed := 0, 0, 0
	for _, run := range r.Runs {
		if float64(run.DurationSeconds) < 2*interval.Seconds() {
			short++
		}
		if run.Coverage < 0.99 {
			thin++
		}
		if run.ExitCode != 0 {
			failed++
		}
	}
	if short > 0 {
		w = append(w, fmt.Sprintf("%s shorter than two sampling windows (%v): a shorter interval (-i) measures them better", output.Count(short, "run"), 2*interval))
	}
	if thin > 0 {
		w = append(w, fmt.Sprintf("%s with less than 99%% of its span covered by samples: its energy is short by what was not", output.Count(thin, "run")))
	}
	if failed > 0 {
		w = append(w, fmt.Sprintf("the command failed in %s of %d", output.Count(failed, "run"), len(r.Runs)))
	}
	if u := val(r.NetEnergyUncertaintyJoules); r.NetEnergyJoules != nil && math.Abs(float64(r.NetEnergyJoules.Mean)) <= 2*u {
		w = append(w, fmt.Sprintf("the net energy (%s) is within twice the baseline's uncertainty (%s): "+
			"it cannot be told apart from idle; a longer --baseline, or more work per run, would tell", output.Joules(float64(r.NetEnergyJoules.Mean)), output.Joules(u)))
	}
	return w
}
