package output

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/exopower/exopower/internal/wire"
)

func TestAppendSampleLineIsMarshal(t *testing.T) {
	num := func(v float64) *wire.Num { n := wire.Num(v); return &n }
	base := func() wire.SampleLine {
		return wire.SampleLine{
			SchemaVersion: wire.SchemaVersion, Type: "sample", Time: "2025-07-08T05:36:28.123456789Z",
			WindowSeconds:   0.1000234,
			PowerWatts:      wire.Components{Total: 12.5, CPU: 8, GPU: 3.25, ANE: 1.25},
			EnergyJoules:    wire.Components{Total: 1234.567890123, CPU: 1e-7, GPU: 2e21, ANE: 0},
			ThermalPressure: "Nominal",
		}
	}
	for _, c := range []struct {
		name string
		edit func(l *wire.SampleLine)
	}{
		{"a window from powermetrics, without memory or system", func(*wire.SampleLine) {}},
		{"a window from IOReport, with memory and system", func(l *wire.SampleLine) {
			l.PowerWatts.DRAM, l.PowerWatts.System = num(1.25), num(31.4)
			l.EnergyJoules.DRAM, l.EnergyJoules.System = num(0), num(1e-9)
		}},
		{"a node's window, with its label", func(l *wire.SampleLine) { l.Node, l.Label = "mac-1", "mac-1 (10.0.0.2)" }},
		{"names that need escapes", func(l *wire.SampleLine) { l.Node, l.Label = "a\"b\\c<d>&e\n\x01", "café ☕" }},
		{"an empty thermal pressure and negative powers", func(l *wire.SampleLine) {
			l.ThermalPressure, l.PowerWatts.CPU, l.PowerWatts.Total = "", -0.5, -1e-12
		}},
		{"a schema version of two digits", func(l *wire.SampleLine) { l.SchemaVersion = 12 }},
		{"the wall of watch --wall", func(l *wire.SampleLine) { l.Wall = &wire.SampleWall{PowerWatts: num(41.25), EnergyJoules: 1234.5} }},
		{"the wall without a power now", func(l *wire.SampleLine) { l.Wall = &wire.SampleWall{EnergyJoules: 3.6e-5} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := base()
			c.edit(&l)
			want, err := json.Marshal(l)
			if err != nil {
				t.Fatal(err)
			}
			got, err := appendSampleLine([]byte("kept"), &l)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != "kept"+string(want)+"\n" {
				t.Errorf("appendSampleLine:\n got %s\nwant kept%s", got, want)
			}
		})
	}
}

func TestAppendSampleLineRefusesWhatJSONCannotHold(t *testing.T) {
	l := wire.SampleLine{WindowSeconds: wire.Num(math.NaN())}
	if _, err := appendSampleLine(nil, &l); err == nil {
		t.Error("appendSampleLine took NaN, which JSON cannot hold")
	}
}

func BenchmarkSampleLine(b *testing.B) {
	dram, system := wire.Num(1.25), wire.Num(31.4)
	l := wire.SampleLine{
		SchemaVersion: wire.SchemaVersion, Type: "sample", Time: "2025-07-08T05:36:28.123456789Z",
		WindowSeconds:   0.1000234,
		PowerWatts:      wire.Components{Total: 12.5, CPU: 8, GPU: 3.25, ANE: 1.25, DRAM: &dram, System: &system},
		EnergyJoules:    wire.Components{Total: 1234.567890123, CPU: 800.1, GPU: 300.2, ANE: 100.3, DRAM: &dram, System: &system},
		ThermalPressure: "Nominal",
	}
	b.Run("append", func(b *testing.B) {
		var buf []byte
		for b.Loop() {
			buf, _ = appendSampleLine(buf[:0], &l)
		}
	})
	b.Run("json.Marshal", func(b *testing.B) {
		for b.Loop() {
			json.Marshal(l)
		}
	})
}
