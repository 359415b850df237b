package main

import (
	"testing"

	"github.com/exopower/exopower/internal/bench"
	"github.com/exopower/exopower/internal/jsondoc"
	"github.com/exopower/exopower/internal/llm"
	"github.com/exopower/exopower/internal/output"
)

// readmeShapes are the JSON shapes that the commands write beside those
// of internal/wire (the summaries, the lines of watch --json and serve's
// API, checked there), as the JSON reference (docs/json.md) shows them.
var readmeShapes = []jsondoc.Shape{
	// A bench run's nodes are the nodes of run --node, shown there.
	{Names: []string{"bench", "bench-ioreport"}, Type: bench.Report{}, Elsewhere: []string{"results[].runs[].nodes"}},
	// An llm run's span summary is run's (or run --node's), shown there;
	// the parts of each node are written only over several Macs (their
	// fields are in the reference's table), not in an example of one.
	{Names: []string{"llm"}, Type: llm.Report{}, Elsewhere: []string{"results[].run.summary"},
		Never: []string{"baseline.nodes", "results[].figures.nodes", "results[].requests[].prefill.nodes",
			"results[].requests[].decode.nodes", "results[].requests[].whole.nodes"}},
	{Names: []string{"samples-window"}, Type: output.SampleRow{}},
	{Names: []string{"version"}, Type: versionInfo{}},
}

func TestTheJSONReferenceShowsWhatTheCommandsWrite(t *testing.T) {
	jsondoc.TestReference(t, readmeShapes, func(name string) bool {
		return name == "bench" || name == "bench-ioreport" || name == "llm" || name == "samples-window" || name == "version"
	})
}
