package main

import (
	"github.com/exopower/exopower/internal/attrib"
	"github.com/exopower/exopower/internal/sampler"
	"github.com/exopower/exopower/internal/source"
)

// openKernel opens macOS's accounting of processes, for --attribute and
// doctor; the tests give a fake.
var openKernel = attrib.Open

// othersOf is how many of exopower's processes share a command's
// coalition: exopower, and powermetrics where it reads.
func othersOf(meter *sampler.Sampler) int {
	if meter.Source() == source.Powermetrics {
		return 2
	}
	return 1
}
