package main

import (
	"os"
	"strings"
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
	{Names: []string{"bench"}, Type: bench.Report{}, Elsewhere: []string{"results[].runs[].nodes"}},
	{Names: []string{"samples-window"}, Type: output.SampleRow{}},
	{Names: []string{"version"}, Type: versionInfo{}},
}

func TestReadmeJSONReferenceMatchesTheCode(t *testing.T) {
	doc, err := os.ReadFile("../../docs/json.md")
	if err != nil {
		t.Fatal(err)
	}
	examples, err := jsondoc.Examples(doc, "# JSON reference")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range readmeShapes {
		t.Run(strings.Join(s.Names, ","), func(t *testing.T) {
			if err := jsondoc.Check(examples, s); err != nil {
				t.Error(err)
			}
		})
	}
	ours := func(name string) bool { return name == "bench" || name == "samples-window" || name == "version" }
	if u := jsondoc.Unknown(examples, readmeShapes, ours); len(u) > 0 {
		t.Errorf("docs/json.md examples that no test checks: %s", strings.Join(u, ", "))
	}
}
