package wire

import (
	"slices"
	"testing"

	"github.com/exopower/exopower/internal/jsondoc"
)

// wireShapes are the JSON of this package's types, as the JSON reference
// (docs/json.md) shows them: the summaries, the lines of watch --json
// and serve's API.
var wireShapes = []jsondoc.Shape{
	// A node's span is one Mac's: it has no bound of its own.
	{Names: []string{"run", "run-ioreport", "watch-summary", "report", "run-node"}, Type: Summary{},
		Never: []string{"nodes[].uncertainty_joules"}},
	{Names: []string{"watch-sample", "watch-node", "watch-total"}, Type: SampleLine{}},
	{Names: []string{"serve-status"}, Type: Status{}},
	{Names: []string{"serve-span-open"}, Type: Opened{}},
	// A span is one node's: it never holds nodes of its own.
	{Names: []string{"serve-span", "serve-span-end"}, Type: Reading{},
		Never: []string{"nodes", "uncertainty_joules"}},
	// A serve's stream is one Mac's: it has no other to be told apart from.
	{Names: []string{"serve-window"}, Type: SampleLine{}, Never: []string{"label"}},
	{Names: []string{"serve-error"}, Type: Error{}},
}

func TestTheJSONReferenceShowsTheWireAsItIs(t *testing.T) {
	// The rest are the JSON of bench, of llm, of --samples and of version, which
	// cmd/exopower checks against their types.
	notHere := []string{"bench", "bench-ioreport", "llm", "samples-window", "version"}
	jsondoc.TestReference(t, wireShapes, func(name string) bool { return !slices.Contains(notHere, name) })
}
