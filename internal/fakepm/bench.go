package fakepm

import (
	"os"
	"path/filepath"
	"time"
)

// BenchDocuments returns documents of the sizes powermetrics writes, by
// name: cpu_power, gpu_power and thermal on an M1 and on an M2 Ultra (the
// 12 to 65 KB that exopower reads), and the default samplers' tasks array
// on an M2 Ultra (about 200 KB). The benchmarks and scripts/bench.sh
// measure decoders on these same bytes.
func BenchDocuments() map[string][]byte {
	samplers := map[string]bool{"cpu_power": true, "gpu_power": true, "thermal": true}
	doc := func(layout string, tasks int) []byte {
		d := Document{
			Elapsed: 108 * time.Millisecond, Timestamp: time.Date(2025, 7, 8, 5, 36, 24, 0, time.UTC),
			Energy: Watts{1.234, 0.567, 0.012}, Layout: Layouts[layout], OSBuild: "24F74",
			Samplers: samplers, GPUIdle: 0.42, Tasks: tasks,
		}
		return d.Append(nil)
	}
	return map[string][]byte{
		"m1-cpu_gpu_thermal":    doc("m1", 0),
		"ultra-cpu_gpu_thermal": doc("ultra", 0),
		"ultra-default-tasks":   doc("ultra", 190),
	}
}

// WriteBenchDocuments writes BenchDocuments to dir as NAME.plist.
func WriteBenchDocuments(dir string) error {
	for name, b := range BenchDocuments() {
		if err := os.WriteFile(filepath.Join(dir, name+".plist"), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
