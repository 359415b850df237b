package output

import (
	"time"

	"github.com/exopower/exopower/internal/wall"
	"github.com/exopower/exopower/internal/wire"
)

// NewWall is the summary's wall figure of a span of seconds, as the plug
// of info polled every interval measured it, and the warnings it comes
// with, each said to be the plug's.
func NewWall(sp wall.Span, info wall.Info, interval time.Duration, seconds float64) (*wire.Wall, []string) {
	w := &wire.Wall{EnergyJoules: wire.Num(sp.Joules), UncertaintyJoules: wire.Num(sp.UncertaintyJoules), Method: sp.Method,
		Coverage: wire.Num(sp.Coverage), Polls: sp.Polls, Resets: sp.Resets,
		Source: wire.WallSource{Kind: info.Kind, Model: info.Model, Firmware: info.Firmware, Name: info.Name, Address: info.Address,
			IntervalSeconds: wire.Num(interval.Seconds())}}
	if seconds > 0 {
		w.AvgPowerWatts = wire.Num(sp.Joules / seconds)
	}
	if info.HasCounter {
		r := wire.Num(info.CounterResolution)
		w.Source.CounterResolutionJoules = &r
	}
	var warnings []string
	for _, s := range sp.Warnings {
		warnings = append(warnings, "the wall's plug: "+s)
	}
	return w, warnings
}
