package main

import (
	"errors"
	"fmt"

	"github.com/exopower/exopower/internal/attrib"
	"github.com/exopower/exopower/internal/child"
	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/sampler"
	"github.com/exopower/exopower/internal/source"
	"github.com/exopower/exopower/internal/wire"
)

// openKernel opens macOS's accounting of processes, for --attribute; the
// tests give a fake.
var openKernel = attrib.Open

// attribution follows the measured command's own processes
// (--attribute); nil when not asked for.
type attribution struct {
	k    attrib.Kernel
	tree *attrib.Command
}

const withoutAttribute = "run without --attribute to measure the whole Mac alone"

// openAttribution opens the kernel's accounting of processes, before
// anything starts: a Mac that keeps no energy per process is told so
// before the command runs, not after.
func openAttribution(on bool) (*attribution, error) {
	if !on {
		return nil, nil
	}
	k, err := openKernel()
	if err != nil {
		return nil, cli.Fail(fmt.Errorf("--attribute: %w", err), withoutAttribute)
	}
	if info := k.Info(); !info.ProcessEnergy {
		k.Close()
		return nil, cli.Fail(fmt.Errorf("--attribute: this Mac keeps no energy per process (macOS %s, %s): "+
			"it needs macOS 13 or later on Apple Silicon, not in a virtual machine", info.MacOS, info.Chip), withoutAttribute)
	}
	return &attribution{k: k}, nil
}

// watch has the command's tree followed from its start. exopower shares
// the command's coalition, and so does powermetrics where it reads.
func (a *attribution) watch(cmd *child.Command, meter *sampler.Sampler) {
	if a == nil {
		return
	}
	a.tree = attrib.NewCommand(a.k, attrib.PollInterval, othersOf(meter))
	cmd.Watch = a.tree.Watch
}

// othersOf is how many of exopower's processes share a command's
// coalition: exopower, and powermetrics where it reads.
func othersOf(meter *sampler.Sampler) int {
	if meter.Source() == source.Powermetrics {
		return 2
	}
	return 1
}

// finish puts what the tree drew in the summary, beside the Mac's energy
// over the same span, and returns the summary.
func (a *attribution) finish(sum *wire.Summary, res sampler.Result) *wire.Summary {
	if a == nil || a.tree == nil {
		return sum
	}
	defer a.close()
	r, err := a.tree.Result()
	if err != nil {
		sum.Warnings = append(sum.Warnings, "--attribute: the command's processes could not be followed: "+err.Error())
		return sum
	}
	sum.Attribution = r.Wire(attrib.PollInterval, res.Energy, res.Has, a.k.Info())
	for _, w := range r.Warnings {
		sum.Warnings = append(sum.Warnings, "--attribute: "+w)
	}
	if sum.Attribution.EnergyJoules.RestOfMac < 0 {
		sum.Warnings = append(sum.Warnings, "--attribute: the command's figures add up to more than the Mac's "+sum.Attribution.RestOf+
			" energy: the kernel's per-process energy is a model of the CPU's, not a reading of its rail")
	}
	return sum
}

// close releases the kernel's accounting, on any path.
func (a *attribution) close() {
	if a != nil && a.k != nil {
		a.k.Close()
		a.k = nil
	}
}

var errAttributeNodes = errors.New("--attribute reads this Mac's processes: not with --node")
