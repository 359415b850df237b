package ioreport

import (
	"bufio"
	"os"
	"slices"
	"strings"
	"testing"
)

// inventory reads a real Mac's Energy Model channels from testdata: a
// line each, group, subgroup, name and unit label, tab-separated; lines
// of # say where the inventory comes from.
func inventory(t testing.TB, name string) []Channel {
	t.Helper()
	f, err := os.Open("testdata/" + name + ".tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cs []Channel
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "#") || strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 4 {
			t.Fatalf("%s: %q is not group, subgroup, name, unit", name, sc.Text())
		}
		if f[1] == "?" {
			f[1] = ""
		}
		cs = append(cs, Channel{Group: f[0], Subgroup: f[1], Name: f[2], Unit: f[3]})
	}
	return cs
}

// names are the channels each rail of p sums.
func (p *Plan) names() [rails][]string {
	var out [rails][]string
	for r := range rails {
		for _, t := range p.terms[r] {
			out[r] = append(out[r], p.Channels[t.index].Name)
		}
	}
	return out
}

// Each rail takes its channels by exact name on real inventories: CPU
// Energy (the dies' on an Ultra), GPU Energy alone (not GPU0, GPU0_0, GPU
// SRAM), ANE and DRAM at the most aggregate name present; never the
// cores', clusters', DTL or SRAM channels that also name the CPU.
func TestRailsOfRealInventories(t *testing.T) {
	for _, c := range []struct {
		chip     string
		channels int
		want     [rails][]string
	}{
		// macOS 11 put the M1's ANE and DRAM in another group (PMP).
		{"m1", 97, [rails][]string{CPU: {"CPU Energy"}, GPU: {"GPU Energy"}}},
		{"m1_max", 162, [rails][]string{CPU: {"CPU Energy"}, GPU: {"GPU Energy"}, ANE: {"ANE0"}, DRAM: {"DRAM0"}}},
		{"m1_ultra", 321, [rails][]string{CPU: {"DIE_0_CPU Energy", "DIE_1_CPU Energy"}, GPU: {"GPU Energy"},
			ANE: {"ANE0_0", "ANE0_1"}, DRAM: {"DRAM0_0", "DRAM0_1"}}},
		{"m5_max", 364, [rails][]string{CPU: {"CPU Energy"}, GPU: {"GPU Energy"}, ANE: {"ANE0"}, DRAM: {"DRAM0"}}},
		// Partial lists (what public dumps show; a rail in a part not shown
		// has nothing to take): the M2 Ultra's GPU0_0, GPU CS0_0 and the
		// SRAM channels are left to GPU Energy; the A18 Pro's GPU, GPU
		// SRAM, DCS and AMCC are no rail.
		{"m2_ultra_partial", 83, [rails][]string{GPU: {"GPU Energy"}, ANE: {"ANE0_0", "ANE0_1"}, DRAM: {"DRAM0_0", "DRAM0_1"}}},
		{"m2_ultra_b_partial", 100, [rails][]string{ANE: {"ANE0_0", "ANE0_1"}, DRAM: {"DRAM0_0"}}},
		{"m4_pro_partial", 62, [rails][]string{CPU: {"CPU Energy"}}},
		{"a18_pro_partial", 31, [rails][]string{GPU: {"GPU Energy"}, ANE: {"ANE"}, DRAM: {"DRAM"}}},
	} {
		cs := inventory(t, c.chip)
		p := NewPlan(cs)
		got := p.names()
		same := true
		for r := range rails {
			same = same && slices.Equal(got[r], c.want[r])
		}
		if len(cs) != c.channels || !same || len(p.Warnings) != 0 {
			t.Errorf("%s: %d channels, rails %q, warnings %q; want %d and %q", c.chip, len(cs), got, p.Warnings, c.channels, c.want)
		}
	}
}

// A rail's channel in a unit exopower does not know is left out, with a
// warning that names it; the units it knows scale each channel to joules.
func TestUnitsScaleEachChannelAndAnUnknownOneIsLeftOut(t *testing.T) {
	p := NewPlan([]Channel{
		{Group: Group, Name: "CPU Energy", Unit: "mJ"},
		{Group: Group, Name: "GPU Energy", Unit: "nJ"},
		{Group: Group, Name: "ANE", Unit: "uJ"},
		{Group: Group, Name: "DRAM", Unit: "kWh"},
		{Group: "PMP", Name: "DRAM", Unit: "mJ"}, // another group's
	})
	e, moved, back := p.Energy([]int64{0, 0, 0, 0, 0}, []int64{1500, 2_000_000_000, 250_000, 7, 9})
	if back != [rails]bool{} || e != [rails]float64{CPU: 1.5, GPU: 2, ANE: 0.25} || moved != [rails]bool{CPU: true, GPU: true, ANE: true} {
		t.Errorf("energy %v, moved %v, back %v", e, moved, back)
	}
	if p.Has.DRAM || len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], `"DRAM"`) || !strings.Contains(p.Warnings[0], "kWh") {
		t.Errorf("has DRAM %v, warnings %q: want DRAM left out and named", p.Has.DRAM, p.Warnings)
	}
	if e, _, back := p.Energy([]int64{5, 0, 0, 0, 0}, []int64{4, 0, 0, 0, 0}); !back[CPU] || e[CPU] != 0 {
		t.Errorf("a counter that went back read as %v J, back %v", e[CPU], back)
	}
	if !slices.Equal(p.names()[CPU], []string{"CPU Energy"}) {
		t.Errorf("CPU from %q", p.names()[CPU])
	}
}

// A plan's indices are the channels its rails sum, sorted, each once,
// whatever order the rails list them in; a plan of no channel selects
// none (an empty slice), never every channel (nil).
func TestAPlansIndicesAreItsRailsChannelsEachOnce(t *testing.T) {
	var p Plan
	p.terms[CPU] = []term{{7, 1e-3}, {3, 1e-3}}
	p.terms[GPU] = []term{{3, 1e-9}}
	p.terms[DRAM] = []term{{11, 1e-3}}
	if got := p.Indices(); !slices.Equal(got, []int{3, 7, 11}) {
		t.Errorf("Indices() = %v, want [3 7 11]", got)
	}
	if got := (&Plan{}).Indices(); got == nil || len(got) != 0 {
		t.Errorf("an empty plan's Indices() = %#v, want an empty slice", got)
	}
	// On a real Ultra: each DIE_<n>_CPU Energy, GPU Energy, ANE0_<n>,
	// DRAM0_<n>, and nothing else.
	p = NewPlan(inventory(t, "m1_ultra"))
	var want []string
	for _, names := range p.names() {
		want = append(want, names...)
	}
	var got []string
	for _, i := range p.Indices() {
		got = append(got, p.Channels[i].Name)
	}
	slices.Sort(want)
	slices.Sort(got)
	if len(got) == 0 || !slices.Equal(got, want) {
		t.Errorf("M1 Ultra: indices name %v, the rails sum %v", got, want)
	}
}
