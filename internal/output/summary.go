package output

import (
	"encoding/json"
	"io"
	"time"

	"github.com/exopower/exopower/internal/sampler"
	"github.com/exopower/exopower/internal/wire"
)

// ScopeText says what Scope covers, for people.
const ScopeText = "SoC: CPU + GPU + ANE (not the display, memory, SSD or the wall)"

// ScopeSystemText says what each figure covers where the system's power
// is known too.
const ScopeSystemText = "system: the whole Mac as its SMC reports it (PSTR: SoC, memory, display, storage and the rest; not the wall's losses); total: SoC, CPU + GPU + ANE; DRAM: memory"

// scopeOf says what the figures of c cover.
func scopeOf(c wire.Components) string {
	if c.System != nil {
		return ScopeSystemText
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
	return &wire.Summary{
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
		Warnings:        warnings,
	}
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
