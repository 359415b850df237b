package calibrate

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// Loader makes the Mac work at a level, in percent of every core's time;
// 0 is idle.
type Loader interface{ Set(level int) }

// Meter reads the Mac and the wall side by side.
type Meter interface {
	// Begin opens a span of both now, and returns its start and the
	// function that closes it at end with the average powers over it.
	Begin(ctx context.Context) (start time.Time, end func(ctx context.Context, at time.Time) (Reading, error))
}

// Reading is the average powers over a span, in W, and how much of it
// each side's readings covered (0 to 1).
type Reading struct {
	Wall, System, SoC         float64
	HasSystem                 bool
	WallCoverage, MacCoverage float64
	// Warnings are the plug's and the Mac's, safe to print.
	Warnings []string
}

// Config is a ladder.
type Config struct {
	// Levels are the steps' loads, in percent, in the order they run.
	Levels []int
	// Step is each step's length; the first Settle of it is not
	// measured, so that the Mac's power, its fans and the plug's
	// readings have reached the new level.
	Step, Settle time.Duration
	// Now and Sleep are the clock; nil: the real one.
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
}

// Step is one step of the ladder as measured.
type Step struct {
	LevelPercent int     `json:"level_percent"`
	Seconds      float64 `json:"seconds"`
	WallWatts    float64 `json:"wall_watts"`
	// SystemWatts is the SMC's system power, null where the source has
	// none (powermetrics).
	SystemWatts *float64 `json:"system_watts"`
	SoCWatts    float64  `json:"soc_watts"`
	// WallCoverage is the share of the step the plug's readings covered.
	WallCoverage float64  `json:"wall_coverage"`
	Warnings     []string `json:"-"`
}

// minCoverage is how much of a step each side must cover for its
// average to be a pair: a plug that stalled or stopped answering for
// more than a tenth of a step gives an average of what it did not see.
const minCoverage = 0.9

// Run runs the ladder: at each level, the load is set, the Mac settles,
// and the rest of the step is measured on both sides. progress, when not
// nil, is told of each step as it ends. The load is left at the last
// level: the caller stops it, on every path. A step whose readings do
// not cover it ends the ladder with an error that says which.
func Run(ctx context.Context, cfg Config, load Loader, m Meter, progress func(i int, s Step)) ([]Step, error) {
	now, sleep := cfg.Now, cfg.Sleep
	if now == nil {
		now = time.Now
	}
	if sleep == nil {
		sleep = sleepCtx
	}
	var steps []Step
	for i, level := range cfg.Levels {
		load.Set(level)
		if err := sleep(ctx, cfg.Settle); err != nil {
			return steps, err
		}
		start, end := m.Begin(ctx)
		if err := sleep(ctx, cfg.Step-cfg.Settle); err != nil {
			return steps, err
		}
		at := now()
		r, err := end(ctx, at)
		if err != nil {
			return steps, fmt.Errorf("step %d (%d %%): %w", i+1, level, err)
		}
		s := Step{LevelPercent: level, Seconds: at.Sub(start).Seconds(), WallWatts: r.Wall, SoCWatts: r.SoC,
			WallCoverage: r.WallCoverage, Warnings: r.Warnings}
		if r.HasSystem {
			s.SystemWatts = &r.System
		}
		steps = append(steps, s)
		if progress != nil {
			progress(i, s)
		}
		if err := covered(i, level, r); err != nil {
			return steps, err
		}
	}
	return steps, nil
}

// covered says why a step's reading is no pair.
func covered(i, level int, r Reading) error {
	switch {
	case r.WallCoverage < minCoverage:
		return fmt.Errorf("step %d (%d %%): the plug's readings covered %.0f %% of it: it stalled or stopped answering", i+1, level, 100*r.WallCoverage)
	case r.MacCoverage < minCoverage:
		return fmt.Errorf("step %d (%d %%): the Mac's readings covered %.0f %% of it", i+1, level, 100*r.MacCoverage)
	}
	return nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Fits are the fits of a ladder: the wall against the system's power
// where the source has it, and against the SoC's.
type Fits struct {
	// System and SoC are nil where not fitted or refused.
	System, SoC *Fit
	// SoCRefused says why the SoC's fit was refused where the system's
	// was kept: the calibration holds without it.
	SoCRefused string
}

// FitSteps fits the steps. It fails with the reason where the fit that
// the estimate would use (the system's where every step has it, else the
// SoC's) cannot be trusted: fewer than three distinct levels, or a fit
// outside its Bounds.
func FitSteps(steps []Step) (Fits, error) {
	var levels []int
	for _, s := range steps {
		if !slices.Contains(levels, s.LevelPercent) {
			levels = append(levels, s.LevelPercent)
		}
	}
	if len(levels) < 3 {
		return Fits{}, fmt.Errorf("%d distinct levels: a line through fewer than three cannot show that it is one", len(levels))
	}
	var sys, soc []Point
	hasSystem := true
	for _, s := range steps {
		soc = append(soc, Point{s.SoCWatts, s.WallWatts})
		if s.SystemWatts == nil {
			hasSystem = false
			continue
		}
		sys = append(sys, Point{*s.SystemWatts, s.WallWatts})
	}
	var out Fits
	socFit, socErr := judged(soc, SoCBounds)
	if !hasSystem {
		if socErr != nil {
			return Fits{}, fmt.Errorf("the wall against the SoC's power: %w", socErr)
		}
		out.SoC = &socFit
		return out, nil
	}
	sysFit, err := judged(sys, SystemBounds)
	if err != nil {
		return Fits{}, fmt.Errorf("the wall against the system's power: %w", err)
	}
	out.System = &sysFit
	if socErr != nil {
		out.SoCRefused = socErr.Error()
	} else {
		out.SoC = &socFit
	}
	return out, nil
}

// judged is the fit of pts where b trusts it.
func judged(pts []Point, b Bounds) (Fit, error) {
	f, err := Linear(pts)
	if err == nil {
		err = b.Check(f)
	}
	return f, err
}
