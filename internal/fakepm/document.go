package fakepm

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"time"
)

// Layout is a chip's CPU cluster layout: cluster names and CPUs in each.
type Layout struct {
	Model    string
	Clusters []Cluster
}

// Cluster is one CPU cluster.
type Cluster struct {
	Name string
	CPUs int
}

// Layouts are the cluster layouts of real chips, by name.
var Layouts = map[string]Layout{
	// M1: one efficiency and one performance cluster.
	"m1": {Model: "MacBookPro17,1", Clusters: []Cluster{{"E-Cluster", 4}, {"P-Cluster", 4}}},
	// M1 Pro / Max: two performance clusters.
	"pro": {Model: "MacBookPro18,2", Clusters: []Cluster{{"E-Cluster", 2}, {"P0-Cluster", 4}, {"P1-Cluster", 4}}},
	// M2 Ultra: two dies, each with its own clusters.
	"ultra": {Model: "Mac14,14", Clusters: []Cluster{
		{"E0-Cluster", 4}, {"P0-Cluster", 4}, {"P1-Cluster", 4},
		{"E1-Cluster", 4}, {"P2-Cluster", 4}, {"P3-Cluster", 4},
	}},
}

// Document is what one powermetrics document reports.
type Document struct {
	Elapsed   time.Duration
	Timestamp time.Time
	// Energy per component over the window, in joules.
	Energy   Watts
	Layout   Layout
	OSBuild  string
	Samplers map[string]bool
	Indent   bool
	// GPUIdle is the GPU's idle ratio; NaN is written as nan, as
	// powermetrics does for an idle ratio it could not compute.
	GPUIdle float64
	// Tasks adds a tasks array of this many processes, as the default
	// samplers do: it makes documents of a few hundred KB.
	Tasks int
}

// Append writes the document as powermetrics does, with the values it
// derives: whole-millijoule energies, milliwatt powers written like %g.
func (d *Document) Append(b []byte) []byte {
	w := &xmlw{b: b, indent: d.Indent}
	w.raw(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	w.raw(`<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">` + "\n")
	w.raw(`<plist version="1.0">` + "\n")
	w.open("dict")
	d.appendHeader(w)
	if d.Tasks > 0 {
		w.tasks(d.Tasks, d.Elapsed)
	}
	if d.Samplers["cpu_power"] {
		d.appendProcessor(w)
	}
	if d.Samplers["thermal"] {
		w.kv("thermal_pressure", "string", "Nominal")
	}
	if d.Samplers["gpu_power"] {
		d.appendGPU(w)
	}
	w.close("dict")
	w.raw("</plist>\n")
	return w.b
}

// appendHeader writes the keys that every document starts with, whatever
// the samplers.
func (d *Document) appendHeader(w *xmlw) {
	w.kv("is_delta", "true", "")
	w.kv("elapsed_ns", "integer", strconv.FormatInt(int64(d.Elapsed), 10))
	w.kv("hw_model", "string", d.Layout.Model)
	w.kv("kern_osversion", "string", d.OSBuild)
	w.kv("kern_bootargs", "string", "")
	w.kv("kern_boottime", "integer", "1711489712")
	w.kv("timestamp", "date", d.Timestamp.UTC().Truncate(time.Second).Format("2006-01-02T15:04:05Z"))
}

// appendProcessor writes the cpu_power sampler's dict: the cluster tables,
// which are most of its bytes, then the power keys that exopower reads.
func (d *Document) appendProcessor(w *xmlw) {
	w.key("processor")
	w.open("dict")
	w.key("clusters")
	w.open("array")
	cpu := 0
	for _, c := range d.Layout.Clusters {
		cpu = w.cluster(c, cpu, d.Elapsed)
	}
	w.close("array")
	w.kv("inst_retired", "real", "9.14962e+08")
	w.kv("inst_per_clk", "real", "1.18317")
	cpuMJ, gpuMJ, aneMJ := d.millijoules(0), d.millijoules(1), d.millijoules(2)
	w.key("cpu_energy")
	w.val("integer", strconv.FormatInt(cpuMJ, 10))
	w.key("cpu_power")
	w.val("real", d.milliwatts(cpuMJ))
	w.key("gpu_energy")
	w.val("integer", strconv.FormatInt(gpuMJ, 10))
	w.key("gpu_power")
	w.val("real", d.milliwatts(gpuMJ))
	w.key("ane_energy")
	w.val("integer", strconv.FormatInt(aneMJ, 10))
	w.key("ane_power")
	w.val("real", d.milliwatts(aneMJ))
	w.key("combined_power")
	w.val("real", d.milliwatts(cpuMJ+gpuMJ+aneMJ))
	w.close("dict")
}

// appendGPU writes the gpu_power sampler's dict.
func (d *Document) appendGPU(w *xmlw) {
	idle := "nan"
	idleNS := "0"
	if !math.IsNaN(d.GPUIdle) {
		idle = g(d.GPUIdle)
		idleNS = strconv.FormatInt(int64(float64(d.Elapsed)*max(0, math.Min(1, d.GPUIdle))), 10)
	}
	w.key("gpu")
	w.open("dict")
	w.kv("freq_hz", "real", "1360.85")
	// powermetrics writes idle_ns and idle_ratio twice in the gpu
	// dict (macOS 14 and 15): before and after the state tables.
	w.kv("idle_ns", "integer", idleNS)
	w.kv("idle_ratio", "real", idle)
	w.dvfm(d.Elapsed)
	w.kv("idle_ns", "integer", idleNS)
	w.kv("idle_ratio", "real", idle)
	w.kv("gpu_energy", "integer", strconv.FormatInt(d.millijoules(1), 10))
	w.close("dict")
}

// millijoules returns component c's energy as powermetrics writes it, in
// whole millijoules.
func (d *Document) millijoules(c int) int64 { return int64(math.Round(d.Energy[c] * 1000)) }

// milliwatts returns the average power of mj millijoules over the window.
// powermetrics derives each power from the whole millijoules it writes, not
// from the energy before rounding (835.188 mW is 855 mJ over 1.023721416 s
// in a real M2 Ultra document), so power is quantised as it is there.
func (d *Document) milliwatts(mj int64) string { return g(float64(mj) / d.Elapsed.Seconds()) }

// g formats a real as powermetrics does with C's %g: six significant
// digits, such as 835.188 or 7.02001e+08, which Go's 'g' writes alike.
func g(x float64) string {
	if math.IsNaN(x) {
		return "nan"
	}
	return strconv.FormatFloat(x, 'g', 6, 64)
}

type xmlw struct {
	b      []byte
	indent bool
	depth  int
}

func (w *xmlw) raw(s string) { w.b = append(w.b, s...) }

func (w *xmlw) pad() {
	if w.indent {
		w.b = append(w.b, bytes.Repeat([]byte("  "), w.depth)...)
	}
}

func (w *xmlw) open(tag string) {
	w.pad()
	w.b = append(w.b, '<')
	w.b = append(w.b, tag...)
	w.b = append(w.b, ">\n"...)
	w.depth++
}

func (w *xmlw) close(tag string) {
	w.depth--
	w.pad()
	w.b = append(w.b, "</"...)
	w.b = append(w.b, tag...)
	w.b = append(w.b, ">\n"...)
}

func (w *xmlw) key(k string) {
	w.pad()
	w.b = fmt.Appendf(w.b, "<key>%s</key>\n", k)
}

// val writes a value on a line of its own, as powermetrics does for the
// power keys of the processor dict.
func (w *xmlw) val(typ, v string) {
	w.pad()
	w.b = fmt.Appendf(w.b, "<%s>%s</%s>\n", typ, v, typ)
}

// kv writes a key and its value on one line; typ "true" writes <true/>.
func (w *xmlw) kv(k, typ, v string) {
	w.pad()
	if typ == "true" {
		w.b = fmt.Appendf(w.b, "<key>%s</key><true/>\n", k)
		return
	}
	w.b = fmt.Appendf(w.b, "<key>%s</key><%s>%s</%s>\n", k, typ, v, typ)
}

// cluster writes one cluster's dict with the CPUs numbered from firstCPU,
// and returns the number of the next cluster's first CPU: CPUs are
// numbered across clusters, not within each.
func (w *xmlw) cluster(c Cluster, firstCPU int, elapsed time.Duration) int {
	w.open("dict")
	w.kv("name", "string", c.Name)
	w.kv("hw_resid_counters", "true", "")
	w.kv("freq_hz", "real", "1.02287e+09")
	w.kv("idle_ns", "integer", strconv.FormatInt(int64(elapsed)/3, 10))
	w.kv("idle_ratio", "real", "0.333333")
	w.dvfm(elapsed)
	w.key("cpus")
	w.open("array")
	cpu := firstCPU
	for i := 0; i < c.CPUs; i++ {
		w.open("dict")
		w.kv("cpu", "integer", strconv.Itoa(cpu))
		w.kv("freq_hz", "real", "1.04615e+09")
		w.kv("idle_ns", "integer", strconv.FormatInt(int64(elapsed)/2, 10))
		w.kv("idle_ratio", "real", "0.5")
		w.dvfm(elapsed)
		w.close("dict")
		cpu++
	}
	w.close("array")
	w.close("dict")
	return cpu
}

// tasks writes a tasks array like the default samplers' (per process:
// identity, CPU time, wakeups, disk and network counters).
func (w *xmlw) tasks(n int, elapsed time.Duration) {
	w.key("tasks")
	w.open("array")
	for i := 0; i < n; i++ {
		w.open("dict")
		w.kv("pid", "integer", strconv.Itoa(100+i))
		w.kv("name", "string", fmt.Sprintf("process-%d", i))
		w.kv("started_abstime_ns", "integer", "1749599894123456789")
		w.kv("interval_ns", "integer", strconv.FormatInt(int64(elapsed), 10))
		w.kv("cputime_ns", "integer", strconv.Itoa(i*1000+17))
		w.kv("cputime_ms_per_s", "real", g(float64(i)*0.37))
		w.kv("cputime_sample_ms_per_s", "real", g(float64(i)*0.36))
		w.kv("cputime_userland_ratio", "real", "0.5")
		w.kv("intr_wakeups", "integer", strconv.Itoa(i%7))
		w.kv("intr_wakeups_per_s", "real", g(float64(i%7)*0.98))
		w.kv("idle_wakeups", "integer", strconv.Itoa(i%5))
		w.kv("idle_wakeups_per_s", "real", g(float64(i%5)*0.99))
		w.kv("timer_wakeups", "integer", "0")
		w.kv("diskio_bytesread", "integer", strconv.Itoa(i*4096))
		w.kv("diskio_bytesread_per_s", "real", g(float64(i)*40.96))
		w.kv("diskio_byteswritten", "integer", "0")
		w.kv("diskio_byteswritten_per_s", "real", "0")
		w.kv("packets_received", "integer", "0")
		w.kv("packets_sent", "integer", "0")
		w.kv("energy_impact", "real", g(float64(i)*0.11))
		w.kv("energy_impact_per_s", "real", g(float64(i)*0.109))
		w.close("dict")
	}
	w.close("array")
}

// dvfm writes a frequency-state table: most of a real document's bytes.
func (w *xmlw) dvfm(elapsed time.Duration) {
	w.key("dvfm_states")
	w.open("array")
	for i, f := range []int{600, 972, 1332, 1704, 2064, 2424, 2772, 3132, 3228} {
		w.open("dict")
		w.kv("freq", "integer", strconv.Itoa(f))
		used := int64(0)
		if i == 1 {
			used = int64(elapsed) / 2
		}
		w.kv("used_ns", "integer", strconv.FormatInt(used, 10))
		w.kv("used_ratio", "real", g(float64(used)/float64(elapsed)))
		w.close("dict")
	}
	w.close("array")
}
