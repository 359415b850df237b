package main

import (
	"testing"

	"github.com/exopower/exopower/internal/bench"
	"github.com/exopower/exopower/internal/jsondoc"
	"github.com/exopower/exopower/internal/output"
)

// readmeShapes are the JSON shapes that the commands write beside those
// of internal/wire (the summaries, the lines of watch --json and serve's
// API, checked there), as the JSON reference (docs/json.md) shows them.
var readmeShapes = []jsondoc.Shape{
	// A bench run's nodes are the nodes of run --node, shown there.
	{Names: []string{"bench", "bench-ioreport"}, Type: bench.Report{}, Elsewhere: []string{"results[].runs[].nodes"}},
	{Names: []string{"samples-window"}, Type: output.SampleRow{}},
	{Names: []string{"version"}, Type: versionInfo{}},
}

func TestTheJSONReferenceShowsWhatTheCommandsWrite(t *testing.T) {
	jsondoc.TestReference(t, readmeShapes, func(name string) bool {
		return name == "bench" || name == "bench-ioreport" || name == "samples-window" || name == "version"
	})
}
