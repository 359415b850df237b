// Package ioreport reads the energy counters of IOReport's "Energy Model"
// group and the SMC's system power (key PSTR), in process and without
// root: the readings that powermetrics itself makes and writes out as XML.
//
// The part that needs a Mac is thin (lib.go, over the libraries that
// lib_darwin.go names; on Linux, under the build tag ioreportfake, over a
// fake of them, lib_fake.go): it hands a plain snapshot (the channels'
// names and units once, then their cumulative integer counters; the
// SMC's power in watts) to the code here, which runs and is tested
// everywhere: which channels make which component, their units, a
// window's energy as the exact difference of two readings, the system's
// energy by the trapezoid over its readings, and what the counters'
// habits mean for the numbers (quirks).
package ioreport

import (
	"fmt"
	"slices"
	"strings"

	"github.com/exopower/exopower/internal/power"
)

// Group is the IOReport group whose channels exopower reads.
const Group = "Energy Model"

// Channel is one channel as IOReport names it.
type Channel struct {
	Group, Subgroup, Name string
	// Unit is the channel's unit label as IOReport gives it (mJ, uJ, nJ).
	Unit string
}

// Rail is a component that channels carry energy of: power's rails, of
// which the counters carry the first four.
type Rail = power.Rail

// The rails that channels carry, in the order of power.Values.
const (
	CPU   = power.CPU
	GPU   = power.GPU
	ANE   = power.ANE
	DRAM  = power.DRAM
	rails = int(DRAM) + 1
)

// Channels are read by exact name: a name that merely contains CPU or GPU
// is another measure of the same energy (a cluster, a core, a second GPU
// channel), and summing them counts it twice. Each rail takes the most
// aggregate name present: CPU Energy, else the dies' DIE_<n>_CPU Energy
// (Ultra chips); GPU Energy only (GPU0, GPU0_0 carry the same energy
// again); ANE, else ANE0, else the ANE0_<n>; DRAM, else DRAM0, else the
// DRAM0_<n>.
// The numbered names are matched by hand rather than by regexps: a
// package-level regexp is compiled when exopower starts, whatever the
// command, and most commands never read IOReport.
var choices = [rails][]func(string) bool{
	CPU:  {exactly("CPU Energy"), numbered("DIE_", "_CPU Energy")},
	GPU:  {exactly("GPU Energy")},
	ANE:  {exactly("ANE"), exactly("ANE0"), numbered("ANE0_", "")},
	DRAM: {exactly("DRAM"), exactly("DRAM0"), numbered("DRAM0_", "")},
}

func exactly(name string) func(string) bool { return func(s string) bool { return s == name } }

// numbered matches prefix, one or more ASCII digits, then suffix.
func numbered(prefix, suffix string) func(string) bool {
	return func(s string) bool {
		rest, ok := strings.CutPrefix(s, prefix)
		if !ok {
			return false
		}
		digits, ok := strings.CutSuffix(rest, suffix)
		if !ok || digits == "" {
			return false
		}
		for _, c := range []byte(digits) {
			if c < '0' || c > '9' {
				return false
			}
		}
		return true
	}
}

// joules is what one unit of each label is, in joules.
var joules = map[string]float64{"mJ": 1e-3, "uJ": 1e-6, "µJ": 1e-6, "nJ": 1e-9, "pJ": 1e-12}

// Plan is what a reading of a subscription's channels is made of: which
// channels each rail sums, and each one's unit in joules. It is made once,
// when subscribing: a reading's work is then a walk over a slice.
type Plan struct {
	// Channels are the subscription's, in the order of every reading.
	Channels []Channel
	terms    [rails][]term
	// quantum is each rail's reading's resolution, in joules: one count
	// of each of its channels.
	quantum [rails]float64
	// Has says which rails the channels carry.
	Has power.Reported
	// Warnings say what was left out, and why.
	Warnings []string
}

// term is a channel that a rail sums: its place in a reading, and its
// unit in joules.
type term struct {
	index int
	scale float64
}

// NewPlan classifies the channels of a subscription to the Energy Model
// group. Channels of other groups, and of no rail, are ignored; a
// channel of a rail whose unit is unknown is left out with a warning,
// never guessed. A rail's channel named twice (the same group and name)
// is counted once, the first, with a warning: summing both would count
// the same energy twice.
func NewPlan(channels []Channel) Plan {
	p := Plan{Channels: channels}
	for r := range rails {
		for _, matches := range choices[r] {
			seen := map[string]int{}
			for i, c := range channels {
				if c.Group != Group || !matches(c.Name) {
					continue
				}
				if seen[c.Name]++; seen[c.Name] == 2 {
					p.Warnings = append(p.Warnings, fmt.Sprintf("IOReport channel %q is in the %s group more than once: the first is counted in the %s's energy, the others left out", c.Name, Group, Rail(r)))
				}
				if seen[c.Name] > 1 {
					continue
				}
				scale, ok := joules[strings.TrimSpace(c.Unit)]
				if !ok {
					p.Warnings = append(p.Warnings, fmt.Sprintf("IOReport channel %q is in a unit exopower does not know (%q): left out of the %s's energy", c.Name, c.Unit, Rail(r)))
					continue
				}
				p.terms[r] = append(p.terms[r], term{i, scale})
				p.quantum[r] += scale
			}
			if len(p.terms[r]) > 0 {
				break // the most aggregate name present
			}
		}
	}
	p.Has = power.Reported{CPU: len(p.terms[CPU]) > 0, GPU: len(p.terms[GPU]) > 0, ANE: len(p.terms[ANE]) > 0, DRAM: len(p.terms[DRAM]) > 0}
	return p
}

// Indices are the places in a reading of the channels the plan's rails
// sum, in order, each once: all a stream needs read of the hundreds a
// subscription holds (Library.Select). Empty, not nil, where the plan
// reads none, since nil selects every channel.
func (p *Plan) Indices() []int {
	out := []int{}
	for r := range rails {
		for _, t := range p.terms[r] {
			out = append(out, t.index)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Energy is each rail's energy between two readings of the plan's
// channels, in joules, from the counters' exact differences; which rails
// moved; and which went back (a counter of the rail is lower after than
// before). A rail that went back has no energy here.
func (p *Plan) Energy(before, after []int64) (e [rails]float64, moved, back [rails]bool) {
	for r := range rails {
		for _, t := range p.terms[r] {
			d := after[t.index] - before[t.index]
			switch {
			case d < 0:
				back[r] = true
			case d > 0:
				moved[r] = true
			}
			e[r] += float64(d) * t.scale
		}
		if back[r] {
			e[r] = 0
		}
	}
	return e, moved, back
}

// negative is the first rail with a counter below zero in values, which
// no counter of energy can be: a reading that is not one.
func (p *Plan) negative(values []int64) (Rail, int64, bool) {
	for r := range rails {
		for _, t := range p.terms[r] {
			if v := values[t.index]; v < 0 {
				return Rail(r), v, true
			}
		}
	}
	return 0, 0, false
}
