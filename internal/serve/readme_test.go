package serve

import (
	"os"
	"strings"
	"testing"

	"github.com/exopower/exopower/internal/jsondoc"
	"github.com/exopower/exopower/internal/output"
)

// apiShapes are the JSON that serve answers, as the JSON reference
// (docs/json.md) shows them.
var apiShapes = []jsondoc.Shape{
	{Names: []string{"serve-status"}, Type: status{}},
	{Names: []string{"serve-span-open"}, Type: opened{}},
	// A span is one node's: it never holds nodes of its own.
	{Names: []string{"serve-span", "serve-span-end"}, Type: spanReading{},
		Never: []string{"nodes", "uncertainty_joules"}},
	{Names: []string{"serve-window"}, Type: output.SampleLine{}},
	{Names: []string{"serve-error"}, Type: apiError{}},
}

func TestReadmeShowsTheAPIAsItIs(t *testing.T) {
	doc, err := os.ReadFile("../../docs/json.md")
	if err != nil {
		t.Fatal(err)
	}
	examples, err := jsondoc.Examples(doc, "# JSON reference")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range apiShapes {
		t.Run(strings.Join(s.Names, ","), func(t *testing.T) {
			if err := jsondoc.Check(examples, s); err != nil {
				t.Error(err)
			}
		})
	}
	isServe := func(name string) bool { return strings.HasPrefix(name, "serve-") }
	if u := jsondoc.Unknown(examples, apiShapes, isServe); len(u) > 0 {
		t.Errorf("docs/json.md examples of serve's API that no test checks: %s", strings.Join(u, ", "))
	}
}
