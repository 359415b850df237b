package fakepm

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"howett.net/plist"
)

// decoded is what the tests read back from a document, decoded with a
// plain plist decoder rather than exopower's, so that the fake is checked
// against the format and not against the code it is meant to test.
type decoded struct {
	IsDelta         bool      `plist:"is_delta"`
	ElapsedNS       int64     `plist:"elapsed_ns"`
	HWModel         string    `plist:"hw_model"`
	OSBuild         string    `plist:"kern_osversion"`
	Timestamp       time.Time `plist:"timestamp"`
	ThermalPressure *string   `plist:"thermal_pressure"`
	Tasks           []struct {
		PID        int   `plist:"pid"`
		IntervalNS int64 `plist:"interval_ns"`
	} `plist:"tasks"`
	Processor *struct {
		Clusters []struct {
			Name string `plist:"name"`
			CPUs []struct {
				CPU int `plist:"cpu"`
			} `plist:"cpus"`
		} `plist:"clusters"`
		CPUEnergy     int64   `plist:"cpu_energy"`
		GPUEnergy     int64   `plist:"gpu_energy"`
		ANEEnergy     int64   `plist:"ane_energy"`
		CPUPower      float64 `plist:"cpu_power"`
		GPUPower      float64 `plist:"gpu_power"`
		ANEPower      float64 `plist:"ane_power"`
		CombinedPower float64 `plist:"combined_power"`
	} `plist:"processor"`
	GPU *struct {
		IdleNS    int64   `plist:"idle_ns"`
		IdleRatio float64 `plist:"idle_ratio"`
		GPUEnergy int64   `plist:"gpu_energy"`
	} `plist:"gpu"`
}

func decode(t *testing.T, b []byte) decoded {
	t.Helper()
	var d decoded
	if _, err := plist.Unmarshal(b, &d); err != nil {
		t.Fatalf("decoding %.200q...: %v", b, err)
	}
	return d
}

var allSamplers = map[string]bool{"cpu_power": true, "gpu_power": true, "thermal": true}

// doc returns a document with every sampler over a window of elapsed
// holding energy, changed by set.
func doc(elapsed time.Duration, energy Watts, set func(*Document)) Document {
	d := Document{
		Elapsed:   elapsed,
		Timestamp: time.Date(2025, 7, 8, 5, 36, 24, 0, time.UTC),
		Energy:    energy,
		Layout:    Layouts["m1"],
		OSBuild:   "24F74",
		Samplers:  allSamplers,
		GPUIdle:   0.5,
	}
	if set != nil {
		set(&d)
	}
	return d
}

// closeTo reports whether got is want written with six significant digits,
// as %g writes it.
func closeTo(got, want float64) bool {
	return math.Abs(got-want) <= 5e-6*math.Abs(want)
}

func TestDocumentWritesEnergyInWholeMillijoulesAndPowerFromThem(t *testing.T) {
	tests := []struct {
		name     string
		elapsed  time.Duration
		energy   Watts
		wantMJ   [3]int64
		wantMW   [3]float64
		combined float64
	}{
		{
			name:    "855 mJ over 1.023721416 s is 835.188 mW, as in a real M2 Ultra document",
			elapsed: 1023721416 * time.Nanosecond, energy: Watts{0.855, 0, 0},
			wantMJ: [3]int64{855, 0, 0}, wantMW: [3]float64{835.188, 0, 0}, combined: 835.188,
		},
		{
			name:    "energy is rounded to the nearest millijoule, up or down",
			elapsed: time.Second, energy: Watts{1.2344999, 0.0015001, 0.0004999},
			wantMJ: [3]int64{1234, 2, 0}, wantMW: [3]float64{1234, 2, 0}, combined: 1236,
		},
		{
			name:    "over 100 ms, power comes in 10 mW steps because it is derived from whole millijoules",
			elapsed: 100 * time.Millisecond, energy: Watts{0.0014, 0.0026, 0.1234},
			wantMJ: [3]int64{1, 3, 123}, wantMW: [3]float64{10, 30, 1230}, combined: 1270,
		},
		{
			name:    "energies over 70 J, which overflow 16 bits of millijoules, are written whole",
			elapsed: 5 * time.Second, energy: Watts{75.5, 0.25, 0},
			wantMJ: [3]int64{75500, 250, 0}, wantMW: [3]float64{15100, 50, 0}, combined: 15150,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := doc(tt.elapsed, tt.energy, nil)
			got := decode(t, d.Append(nil))
			p := got.Processor
			if p == nil {
				t.Fatal("no processor dict")
			}
			if mj := [3]int64{p.CPUEnergy, p.GPUEnergy, p.ANEEnergy}; mj != tt.wantMJ {
				t.Errorf("energies = %v mJ, want %v", mj, tt.wantMJ)
			}
			for i, mw := range []float64{p.CPUPower, p.GPUPower, p.ANEPower} {
				if !closeTo(mw, tt.wantMW[i]) {
					t.Errorf("power %d = %v mW, want %v", i, mw, tt.wantMW[i])
				}
			}
			if !closeTo(p.CombinedPower, tt.combined) {
				t.Errorf("combined_power = %v mW, want %v", p.CombinedPower, tt.combined)
			}
			if got.GPU == nil || got.GPU.GPUEnergy != tt.wantMJ[1] {
				t.Errorf("gpu dict's gpu_energy = %+v, want %d mJ", got.GPU, tt.wantMJ[1])
			}
			if got.ElapsedNS != int64(tt.elapsed) {
				t.Errorf("elapsed_ns = %d, want %d", got.ElapsedNS, int64(tt.elapsed))
			}
		})
	}
}

func TestDocumentHasTheKeysOfItsSamplers(t *testing.T) {
	tests := []struct {
		name                        string
		samplers                    []string
		wantProcessor, wantGPU, hot bool
	}{
		{name: "no samplers, as in a VM, leave only the header"},
		{name: "cpu_power writes the processor dict", samplers: []string{"cpu_power"}, wantProcessor: true},
		{name: "gpu_power writes the gpu dict", samplers: []string{"gpu_power"}, wantGPU: true},
		{name: "thermal writes the thermal pressure", samplers: []string{"thermal"}, hot: true},
		{name: "all three write all three", samplers: []string{"cpu_power", "gpu_power", "thermal"}, wantProcessor: true, wantGPU: true, hot: true},
		{name: "samplers the fake does not know add nothing", samplers: []string{"ane_power", "network"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			samplers := map[string]bool{}
			for _, s := range tt.samplers {
				samplers[s] = true
			}
			d := doc(time.Second, Watts{1, 1, 1}, func(d *Document) { d.Samplers = samplers })
			got := decode(t, d.Append(nil))
			if (got.Processor != nil) != tt.wantProcessor || (got.GPU != nil) != tt.wantGPU || (got.ThermalPressure != nil) != tt.hot {
				t.Errorf("processor %v, gpu %v, thermal_pressure %v; want %v, %v, %v",
					got.Processor != nil, got.GPU != nil, got.ThermalPressure != nil, tt.wantProcessor, tt.wantGPU, tt.hot)
			}
			if !got.IsDelta || got.HWModel != "MacBookPro17,1" || got.OSBuild != "24F74" {
				t.Errorf("header = delta %v, model %q, build %q", got.IsDelta, got.HWModel, got.OSBuild)
			}
		})
	}
}

func TestDocumentHasTheClustersOfItsLayout(t *testing.T) {
	tests := []struct {
		layout   string
		model    string
		clusters []string
		cpus     int
	}{
		{"m1", "MacBookPro17,1", []string{"E-Cluster", "P-Cluster"}, 8},
		{"pro", "MacBookPro18,2", []string{"E-Cluster", "P0-Cluster", "P1-Cluster"}, 10},
		{"ultra", "Mac14,14", []string{"E0-Cluster", "P0-Cluster", "P1-Cluster", "E1-Cluster", "P2-Cluster", "P3-Cluster"}, 24},
	}
	for _, tt := range tests {
		t.Run("the "+tt.layout+" layout numbers its CPUs across its clusters", func(t *testing.T) {
			d := doc(time.Second, Watts{}, func(d *Document) { d.Layout = Layouts[tt.layout] })
			got := decode(t, d.Append(nil))
			if got.HWModel != tt.model {
				t.Errorf("hw_model = %q, want %q", got.HWModel, tt.model)
			}
			var names []string
			cpu := 0
			for _, c := range got.Processor.Clusters {
				names = append(names, c.Name)
				for _, x := range c.CPUs {
					if x.CPU != cpu {
						t.Errorf("cluster %s: cpu %d, want %d", c.Name, x.CPU, cpu)
					}
					cpu++
				}
			}
			if !slices.Equal(names, tt.clusters) || cpu != tt.cpus {
				t.Errorf("clusters %v with %d CPUs, want %v with %d", names, cpu, tt.clusters, tt.cpus)
			}
		})
	}
}

func TestDocumentWritesTheGPUIdleRatio(t *testing.T) {
	tests := []struct {
		name      string
		idle      float64
		wantNS    int64
		wantRatio float64 // NaN: nan
	}{
		{"a quarter idle is a quarter of the window", 0.25, 250_000_000, 0.25},
		{"an idle ratio it could not compute is nan, with no idle time", math.NaN(), 0, math.NaN()},
		{"idle time never exceeds the window", 1.7, 1_000_000_000, 1.7},
		{"idle time is never negative", -0.5, 0, -0.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := doc(time.Second, Watts{}, func(d *Document) { d.GPUIdle = tt.idle })
			b := d.Append(nil)
			got := decode(t, b).GPU
			if got.IdleNS != tt.wantNS {
				t.Errorf("idle_ns = %d, want %d", got.IdleNS, tt.wantNS)
			}
			if math.IsNaN(tt.wantRatio) != math.IsNaN(got.IdleRatio) || !math.IsNaN(tt.wantRatio) && got.IdleRatio != tt.wantRatio {
				t.Errorf("idle_ratio = %v, want %v", got.IdleRatio, tt.wantRatio)
			}
			// powermetrics writes both keys twice, before and after the
			// state table; a decoder keeps the last.
			gpu := b[bytes.Index(b, []byte("<key>gpu</key>")):]
			for _, key := range []string{"<key>idle_ns</key>", "<key>idle_ratio</key>"} {
				if n := bytes.Count(gpu, []byte(key)); n != 2 {
					t.Errorf("%s written %d times in the gpu dict, want 2", key, n)
				}
			}
		})
	}
}

func TestDocumentTimestampIsInWholeUTCSeconds(t *testing.T) {
	at := time.Date(2025, 7, 8, 7, 36, 24, 987654321, time.FixedZone("CEST", 2*3600))
	d := doc(time.Second, Watts{}, func(d *Document) { d.Timestamp = at })
	b := d.Append(nil)
	if !bytes.Contains(b, []byte("<date>2025-07-08T05:36:24Z</date>")) {
		t.Errorf("no timestamp 2025-07-08T05:36:24Z (truncated, in UTC) in\n%s", b[:600])
	}
}

func TestDocumentTasksAreOnePerProcess(t *testing.T) {
	d := doc(108*time.Millisecond, Watts{}, func(d *Document) { d.Tasks = 3 })
	got := decode(t, d.Append(nil)).Tasks
	if len(got) != 3 {
		t.Fatalf("%d tasks, want 3", len(got))
	}
	for i, task := range got {
		if task.PID != 100+i || task.IntervalNS != int64(108*time.Millisecond) {
			t.Errorf("task %d: pid %d, interval %d ns", i, task.PID, task.IntervalNS)
		}
	}
}

func TestIndentingChangesOnlyTheLayoutOfTheText(t *testing.T) {
	plain := doc(time.Second, Watts{1, 2, 3}, nil)
	indented := doc(time.Second, Watts{1, 2, 3}, func(d *Document) { d.Indent = true })
	p, i := plain.Append(nil), indented.Append(nil)
	if bytes.Equal(p, i) || !bytes.Contains(i, []byte("\n  <key>is_delta</key>")) {
		t.Fatalf("the indented document is not indented:\n%s", i[:400])
	}
	if !bytes.Equal(bytes.ReplaceAll(i, []byte("  "), nil), p) {
		t.Error("the indented document differs from the plain one by more than its indents")
	}
}

func TestAppendAddsToWhatIsThere(t *testing.T) {
	d := doc(time.Second, Watts{1, 2, 3}, nil)
	b := d.Append([]byte("before\x00"))
	if !bytes.HasPrefix(b, []byte("before\x00<?xml ")) || !bytes.HasSuffix(b, []byte("</plist>\n")) {
		t.Errorf("Append(prefix) = %.20q...%q", b, b[len(b)-10:])
	}
}

func TestGFormatsRealsAsCsPercentG(t *testing.T) {
	tests := []struct {
		x    float64
		want string
	}{
		{835.18834, "835.188"},
		{7.020014e8, "7.02001e+08"},
		{0, "0"},
		{1234, "1234"},
		{0.333333333, "0.333333"},
		{math.NaN(), "nan"},
	}
	for _, tt := range tests {
		if got := g(tt.x); got != tt.want {
			t.Errorf("g(%v) = %q, want %q", tt.x, got, tt.want)
		}
	}
}

func TestBenchDocumentsHaveTheSizesOfRealOnes(t *testing.T) {
	tests := []struct {
		name     string
		min, max int
	}{
		{"m1-cpu_gpu_thermal", 12 << 10, 65 << 10},
		{"ultra-cpu_gpu_thermal", 12 << 10, 65 << 10},
		{"ultra-default-tasks", 150 << 10, 260 << 10},
	}
	docs := BenchDocuments()
	if len(docs) != len(tests) {
		t.Errorf("%d documents, want %d", len(docs), len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.name+" is as big as a real one and decodes", func(t *testing.T) {
			b := docs[tt.name]
			if len(b) < tt.min || len(b) > tt.max {
				t.Errorf("%d bytes, want %d to %d", len(b), tt.min, tt.max)
			}
			if got := decode(t, b); got.Processor == nil || got.Processor.CPUEnergy != 1234 {
				t.Errorf("processor = %+v, want cpu_energy 1234", got.Processor)
			}
		})
	}
}

func TestWriteBenchDocumentsWritesEachToAFile(t *testing.T) {
	dir := t.TempDir()
	if err := WriteBenchDocuments(dir); err != nil {
		t.Fatal(err)
	}
	for name, want := range BenchDocuments() {
		got, err := os.ReadFile(filepath.Join(dir, name+".plist"))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s.plist: %d bytes, %v; want %d bytes", name, len(got), err, len(want))
		}
	}
	if err := WriteBenchDocuments(filepath.Join(dir, "missing")); err == nil {
		t.Error("WriteBenchDocuments into a missing folder said nothing")
	}
}
