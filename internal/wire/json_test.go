package wire

import (
	"slices"
	"testing"

	"github.com/exopower/exopower/internal/jsondoc"
)

// spanTables are the field tables of a Summary of one Mac, each at its
// paths in the Summary.
var spanTables = []jsondoc.TableAt{
	{Name: "summary", At: []string{""}},
	{Name: "summary-source", At: []string{"source"}},
	{Name: "summary-components", At: []string{"energy_joules", "avg_power_watts", "measured_avg_power_watts", "peak_power_watts"}},
	{Name: "summary-rails", At: []string{"rails"}},
	{Name: "summary-rail", At: []string{"rails.*"}},
}

// attributionTables are the tables of the command's own processes'
// energy (run --attribute, a span's ?pid=).
var attributionTables = []jsondoc.TableAt{
	{Name: "summary-attribute", At: []string{""}},
	{Name: "summary-attribution", At: []string{"attribution"}},
	{Name: "summary-attribution-energy", At: []string{"attribution.energy_joules"}},
}

// appTables are the tables of one app's energy (run --app, a span's
// ?app=).
var appTables = []jsondoc.TableAt{
	{Name: "summary-app-field", At: []string{""}},
	{Name: "summary-app", At: []string{"app"}},
	{Name: "summary-app-figures", At: []string{"app.energy_joules", "app.avg_power_watts"}},
}

// wallTables are the tables of the energy at the wall (run --wall).
var wallTables = []jsondoc.TableAt{
	{Name: "summary-wall", At: []string{""}},
	{Name: "summary-wall-figure", At: []string{"wall"}},
	{Name: "summary-wall-source", At: []string{"wall.source"}},
}

// estimatedTables are the tables of the wall estimated from this Mac's
// calibration (run without --wall).
var estimatedTables = []jsondoc.TableAt{
	{Name: "summary-wall-estimated", At: []string{""}},
	{Name: "summary-wall-estimated-figure", At: []string{"wall_estimated"}},
	{Name: "summary-wall-calibration", At: []string{"wall_estimated.calibration"}},
}

// costTables are the tables of the span's energy priced (--price,
// --carbon-intensity).
var costTables = []jsondoc.TableAt{
	{Name: "summary-cost", At: []string{""}},
	{Name: "summary-cost-figure", At: []string{"cost"}},
	{Name: "summary-co2e-figure", At: []string{"co2e"}},
}

// summaryTables are the tables of a Summary: a span's, the fields of
// several Macs, and each node's span.
var summaryTables = slices.Concat(spanTables, jsondoc.Under("nodes[]", spanTables...), attributionTables, appTables, wallTables, jsondoc.Under("nodes[]", wallTables...),
	estimatedTables, jsondoc.Under("nodes[]", estimatedTables...), costTables, jsondoc.Under("nodes[]", costTables...),
	[]jsondoc.TableAt{{Name: "summary-cluster", At: []string{""}}, {Name: "summary-node", At: []string{"nodes[]"}}})

// wireShapes are the JSON of this package's types, as the JSON reference
// (docs/json.md and docs/json/) shows them: the summaries, the lines of
// watch --json and serve's API.
var wireShapes = []jsondoc.Shape{
	// A node's span is one Mac's: it has no bound of its own.
	// A node's span is one Mac's, and never follows a process.
	// A node's wall is null for now: run --wall's own shows its fields.
	// A node's estimate is null too: run's own shows its fields.
	{Names: []string{"run", "run-ioreport", "watch-summary", "report", "run-node", "run-attribute", "run-wall", "run-wall-estimated", "run-cost", "run-app"}, Type: Summary{},
		Never: []string{"nodes[].uncertainty_joules", "nodes[].attribution", "nodes[].app"}, Elsewhere: []string{"nodes[].wall", "nodes[].wall_estimated", "nodes[].cost", "nodes[].co2e"}, Tables: summaryTables},
	{Names: []string{"watch-sample", "watch-node", "watch-total", "watch-wall"}, Type: SampleLine{},
		Tables: []jsondoc.TableAt{{Name: "watch-line", At: []string{""}}, {Name: "watch-line-wall", At: []string{"wall"}},
			{Name: "summary-components", At: []string{"power_watts", "energy_joules"}}}},
	{Names: []string{"serve-status", "serve-status-wall", "serve-status-wall-estimated"}, Type: Status{}, Tables: []jsondoc.TableAt{
		{Name: "serve-status", At: []string{""}},
		{Name: "serve-status-wall", At: []string{"wall"}},
		{Name: "serve-status-wall-estimated", At: []string{"wall_estimated"}},
		{Name: "summary-wall-calibration", At: []string{"wall_estimated.calibration"}},
		{Name: "serve-last-window", At: []string{"last_window"}},
		{Name: "summary-source", At: []string{"source"}},
		{Name: "summary-components", At: []string{"energy_joules", "last_window.power_watts"}},
		{Name: "summary-rails", At: []string{"rails"}},
		{Name: "summary-rail", At: []string{"rails.*"}},
	}},
	{Names: []string{"serve-span-open"}, Type: Opened{}, Tables: []jsondoc.TableAt{{Name: "serve-span-open", At: []string{""}}}},
	// A span is one node's: it never holds nodes of its own.
	// A span's attribution is run --attribute's, shown whole there.
	{Names: []string{"serve-span", "serve-span-end", "serve-span-pid", "serve-span-app"}, Type: Reading{},
		Never: []string{"nodes", "uncertainty_joules"}, Elsewhere: []string{"attribution", "wall", "wall_estimated", "cost", "co2e"},
		Tables: slices.Concat([]jsondoc.TableAt{{Name: "serve-span", At: []string{""}}}, spanTables, attributionTables, appTables, wallTables, estimatedTables, costTables)},
	// A serve's stream is one Mac's: it has no other to be told apart from.
	// Nor is its plug in it: the counters and spans hold the wall.
	{Names: []string{"serve-window"}, Type: SampleLine{}, Never: []string{"label", "wall"}},
	{Names: []string{"serve-error"}, Type: Error{}, Tables: []jsondoc.TableAt{{Name: "serve-error", At: []string{""}}}},
}

func TestTheJSONReferenceShowsTheWireAsItIs(t *testing.T) {
	// The rest are the JSON of bench, of llm, of --samples and of version, which
	// cmd/exopower checks against their types.
	jsondoc.TestReference(t, wireShapes, func(name string) bool { return !jsondoc.OfTheCommands(name) })
}
