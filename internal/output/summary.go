package output

import (
	"encoding/json"
	"io"
	"time"

	"github.com/exopower/exopower/internal/power"
	"github.com/exopower/exopower/internal/sampler"
	"github.com/exopower/exopower/internal/wire"
)

// ScopeText says what Scope covers, for people.
const ScopeText = "SoC: CPU + GPU + ANE (not the display, memory, SSD or the wall)"

// ScopeSystemText says what each figure covers where the system's power
// is known too: short enough for one line of 100 columns.
const ScopeSystemText = "system: the whole Mac (its SMC's PSTR, not the wall); total: SoC, CPU + GPU + ANE; DRAM: memory"

// ScopeDRAMText says what each figure covers where the memory's power is
// known but not the system's (no SMC answered).
const ScopeDRAMText = "total: SoC, CPU + GPU + ANE; DRAM: memory (not the display, SSD or the wall)"

// scopeOf says what the figures of a reading with has cover.
func scopeOf(has power.Reported) string {
	switch {
	case has.System:
		return ScopeSystemText
	case has.DRAM:
		return ScopeDRAMText
	}
	return ScopeText
}

// NewSummary describes a sampler result. started is the wall-clock time
// of the start of the span; interval is the sample interval asked of
// powermetrics. The caller fills in Command, ExitCode, Signal and Title.
func NewSummary(r sampler.Result, started time.Time, interval time.Duration) *wire.Summary {
	warnings := r.Warnings
	if warnings == nil {
		warnings = []string{}
	}
	sum := &wire.Summary{
		SchemaVersion:   wire.SchemaVersion,
		Type:            "summary",
		StartedAt:       started.UTC().Format(time.RFC3339Nano),
		DurationSeconds: wire.Num(r.Duration.Seconds()),
		IntervalSeconds: wire.Num(interval.Seconds()),
		Samples:         r.Samples,
		Coverage:        wire.Num(r.Coverage),
		Scope:           wire.Scope,
		Source:          wire.Source{Tool: r.Source, HWModel: r.HWModel, OSBuild: r.OSBuild},
		EnergyJoules:    wire.NewComponents(r.Energy, r.Has),
		AvgPowerWatts:   wire.NewComponents(r.Average, r.Has),
		PeakPowerWatts:  wire.NewComponents(r.Peak, r.Has),
		Rails:           wire.NewRails(r.Health),
		Warnings:        warnings,
	}
	sum.MeasuredAvgPowerWatts = sum.MeasuredAverage()
	return sum
}

// WriteJSON writes v as one line of JSON.
func WriteJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
