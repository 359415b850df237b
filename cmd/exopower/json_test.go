package main

import (
	"slices"
	"testing"

	"github.com/exopower/exopower/internal/apps"
	"github.com/exopower/exopower/internal/bench"
	"github.com/exopower/exopower/internal/compare"
	"github.com/exopower/exopower/internal/jsondoc"
	"github.com/exopower/exopower/internal/llm"
	"github.com/exopower/exopower/internal/output"
)

// spanTables are the field tables of a wire.Summary, each at its paths
// in the summary; internal/wire's test holds them to the summary itself.
var spanTables = []jsondoc.TableAt{
	{Name: "summary", At: []string{""}},
	{Name: "summary-source", At: []string{"source"}},
	{Name: "summary-components", At: []string{"energy_joules", "avg_power_watts", "measured_avg_power_watts", "peak_power_watts"}},
	{Name: "summary-rails", At: []string{"rails"}},
	{Name: "summary-rail", At: []string{"rails.*"}},
}

// wallTables are the tables of a summary's wall (run --wall), null
// elsewhere for now.
var wallTables = []jsondoc.TableAt{
	{Name: "summary-wall", At: []string{""}},
	{Name: "summary-wall-figure", At: []string{"wall"}},
	{Name: "summary-wall-source", At: []string{"wall.source"}},
	// The estimate from a calibration, beside the wall, null where a plug
	// is read, or there is no calibration.
	{Name: "summary-wall-estimated", At: []string{""}},
	{Name: "summary-wall-estimated-figure", At: []string{"wall_estimated"}},
	{Name: "summary-wall-calibration", At: []string{"wall_estimated.calibration"}},
}

// costTables are the tables of a summary's cost and CO2e (--price,
// --carbon-intensity), null in the spans of nodes and inside llm's.
var costTables = []jsondoc.TableAt{
	{Name: "summary-cost", At: []string{""}},
	{Name: "summary-cost-figure", At: []string{"cost"}},
	{Name: "summary-co2e-figure", At: []string{"co2e"}},
}

// nodesTables are the tables of the spans of the nodes of --node, under
// prefix: a span's and the node's own.
func nodesTables(prefix string) []jsondoc.TableAt {
	return slices.Concat(jsondoc.Under(prefix, spanTables...), jsondoc.Under(prefix, wallTables...), jsondoc.Under(prefix, costTables...),
		[]jsondoc.TableAt{{Name: "summary-node", At: []string{prefix}}})
}

// attributionTables are the tables of a summary's attribution (run
// --attribute) under the object that holds it.
var attributionTables = []jsondoc.TableAt{
	{Name: "summary-attribution", At: []string{"attribution"}},
	{Name: "summary-attribution-energy", At: []string{"attribution.energy_joules"}},
}

var benchTables = slices.Concat([]jsondoc.TableAt{
	{Name: "bench", At: []string{""}},
	{Name: "bench-baseline", At: []string{"baseline"}},
	{Name: "bench-idle", At: []string{"baseline.before", "baseline.between", "baseline.after"}},
	{Name: "bench-result", At: []string{"results[]"}},
	{Name: "bench-run", At: []string{"results[].runs[]"}},
	{Name: "bench-spread", At: []string{"results[].energy_joules", "results[].net_energy_joules",
		"results[].system_energy_joules", "results[].net_system_energy_joules", "results[].avg_power_watts",
		"results[].duration_seconds", "results[].energy_per_unit_joules", "results[].units_per_joule", "results[].command_energy_joules"}},
	{Name: "summary-source", At: []string{"source"}},
	{Name: "summary-components", At: []string{"results[].runs[].energy_joules", "results[].runs[].avg_power_watts"}},
	{Name: "bench-wall", At: []string{"wall"}},
	{Name: "summary-wall-source", At: []string{"wall.source"}},
	{Name: "bench-idle-wall", At: []string{"baseline.wall"}},
	{Name: "bench-run-wall", At: []string{"results[].runs[].wall"}},
	{Name: "bench-result-wall", At: []string{"results[].wall"}},
	{Name: "bench-spread", At: []string{"results[].wall.energy_joules", "results[].wall.net_energy_joules", "results[].wall.energy_per_unit_joules"}},
	{Name: "bench-run-wall-estimated", At: []string{"results[].runs[].wall_estimated"}},
	{Name: "bench-result-wall-estimated", At: []string{"results[].wall_estimated"}},
	{Name: "bench-spread", At: []string{"results[].wall_estimated.energy_joules", "results[].wall_estimated.net_energy_joules", "results[].wall_estimated.energy_per_unit_joules"}},
	{Name: "summary-wall-calibration", At: []string{"results[].wall_estimated.calibration"}},
	{Name: "bench-result-cost", At: []string{"results[]"}},
	{Name: "summary-cost-figure", At: []string{"results[].cost"}},
	{Name: "bench-cost", At: []string{"results[].cost"}},
	{Name: "summary-co2e-figure", At: []string{"results[].co2e"}},
	{Name: "bench-co2e", At: []string{"results[].co2e"}},
}, nodesTables("results[].runs[].nodes[]"), jsondoc.Under("results[].runs[]", attributionTables...))

var llmTables = slices.Concat([]jsondoc.TableAt{
	{Name: "llm", At: []string{""}},
	{Name: "llm-node", At: []string{"nodes[]"}},
	{Name: "llm-baseline", At: []string{"baseline"}},
	{Name: "llm-baseline-node", At: []string{"baseline.nodes[]"}},
	{Name: "llm-result", At: []string{"results[]"}},
	{Name: "llm-run", At: []string{"results[].run"}},
	{Name: "llm-figures", At: []string{"results[].figures"}},
	{Name: "llm-figures-node", At: []string{"results[].figures.nodes[]"}},
	{Name: "llm-scope", At: []string{"results[].figures.*", "results[].figures.nodes[].*"}},
	{Name: "llm-spread", At: []string{"results[].figures.*", "results[].figures.*.*", "results[].figures.nodes[].*.*"}},
	{Name: "llm-request", At: []string{"results[].requests[]"}},
	{Name: "llm-phase", At: []string{"results[].requests[].*"}},
	{Name: "llm-phase-node", At: []string{"results[].requests[].*.nodes[]"}},
	{Name: "llm-run-wall", At: []string{"results[].run.wall"}},
	{Name: "llm-run-wall-estimated", At: []string{"results[].run.wall_estimated"}},
	{Name: "bench-idle-wall", At: []string{"baseline.wall"}},
	{Name: "summary-cost-figure", At: []string{"results[].run.cost"}},
	{Name: "llm-run-cost", At: []string{"results[].run.cost"}},
	{Name: "summary-co2e-figure", At: []string{"results[].run.co2e"}},
	{Name: "llm-run-co2e", At: []string{"results[].run.co2e"}},
}, jsondoc.Under("results[].run.summary", spanTables...), jsondoc.Under("results[].run.summary", wallTables...),
	jsondoc.Under("results[].run.summary", costTables...), nodesTables("results[].run.summary.nodes[]"),
	[]jsondoc.TableAt{{Name: "summary-cluster", At: []string{"results[].run.summary"}}})

// readmeShapes are the JSON shapes that the commands write beside those
// of internal/wire (the summaries, the lines of watch --json and serve's
// API, checked there), as the JSON reference (docs/json.md and
// docs/json/) shows them.
var readmeShapes = []jsondoc.Shape{
	// A bench run's nodes are the nodes of run --node, shown there; a
	// node's span is one Mac's, with no bound of its own.
	// A run's attribution is run --attribute's, shown whole there.
	{Names: []string{"bench", "bench-ioreport", "bench-attribute", "bench-wall", "bench-wall-estimated", "bench-cost"}, Type: bench.Report{}, Elsewhere: []string{"results[].runs[].nodes", "results[].runs[].attribution"},
		Never: []string{"results[].runs[].nodes[].uncertainty_joules", "results[].runs[].nodes[].attribution", "results[].runs[].nodes[].app"}, Tables: benchTables},
	// An llm run's span summary is run's (or run --node's), shown there;
	// the parts of each node are written only over several Macs (their
	// fields are in the reference's tables), not in an example of one.
	{Names: []string{"llm", "llm-wall", "llm-wall-estimated", "llm-cost"}, Type: llm.Report{}, Elsewhere: []string{"results[].run.summary"},
		Never: []string{"baseline.nodes", "results[].figures.nodes", "results[].requests[].prefill.nodes",
			"results[].requests[].decode.nodes", "results[].requests[].whole.nodes",
			"results[].run.summary.nodes[].uncertainty_joules", "results[].run.summary.attribution", "results[].run.summary.nodes[].attribution",
			"results[].run.summary.app", "results[].run.summary.nodes[].app"},
		Tables: llmTables},
	{Names: []string{"samples-window", "samples-window-wall"}, Type: output.SampleRow{}, Tables: []jsondoc.TableAt{
		{Name: "samples-window", At: []string{""}},
		{Name: "samples-window-wall", At: []string{"wall"}},
		{Name: "summary-components", At: []string{"power_watts", "energy_joules"}},
		{Name: "summary-source", At: []string{"source"}},
	}},
	{Names: []string{"version"}, Type: versionInfo{}, Tables: []jsondoc.TableAt{{Name: "version", At: []string{""}}}},
	{Names: []string{"compare"}, Type: compare.Report{}, Tables: []jsondoc.TableAt{
		{Name: "compare", At: []string{""}},
		{Name: "compare-side", At: []string{"old", "new"}},
		{Name: "summary-source", At: []string{"old.source", "new.source"}},
		{Name: "compare-row", At: []string{"rows[]"}},
		{Name: "compare-values", At: []string{"rows[].old", "rows[].new"}},
		{Name: "compare-row-cost", At: []string{"rows[].cost"}},
		{Name: "compare-row-co2e", At: []string{"rows[].co2e"}},
	}},
	// top's wall is watch's, shown there.
	{Names: []string{"top-line"}, Type: apps.Line{}, Elsewhere: []string{"wall"}, Tables: []jsondoc.TableAt{
		{Name: "top-line", At: []string{""}},
		{Name: "top-mac", At: []string{"mac"}},
		{Name: "summary-components", At: []string{"mac.power_watts", "mac.energy_joules"}},
		{Name: "watch-line-wall", At: []string{"wall"}},
		{Name: "top-app", At: []string{"apps[]"}},
		{Name: "top-process", At: []string{"apps[].processes[]"}},
		{Name: "top-figures", At: []string{"apps[].power_watts", "apps[].energy_joules", "apps[].processes[].power_watts",
			"apps[].processes[].energy_joules", "forgotten_energy_joules"}},
		{Name: "top-rest", At: []string{"rest"}},
		{Name: "top-rest-figures", At: []string{"rest.power_watts", "rest.energy_joules"}},
		{Name: "top-processes", At: []string{"processes"}},
	}},
}

func TestTheJSONReferenceShowsWhatTheCommandsWrite(t *testing.T) {
	jsondoc.TestReference(t, readmeShapes, jsondoc.OfTheCommands)
}
