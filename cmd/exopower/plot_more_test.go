package main

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/wire"
)

// The lines of watch --node --json over two serves: a line per node and
// their total, on one chart, and as a PNG that decodes.
func TestPlotOfAWatchOverNodes(t *testing.T) {
	t.Parallel() // each waits on its nodes in real time, not on the CPU
	_, out := watchTwoNodes(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "watch.ndjson")
	if err := os.WriteFile(in, out, 0o644); err != nil {
		t.Fatal(err)
	}
	svg := filepath.Join(dir, "w.svg")
	exopower(t, "plot", in, "-o", svg)
	texts := strings.Split(svgTexts(t, svg), "\n")
	// The nodes are named in the order their first lines came.
	for _, want := range []string{"ten", "twenty", "total"} {
		if !containsLine(texts, want) {
			t.Errorf("no text %q in %q", want, texts)
		}
	}
	if !containsLine(texts, "exopower watch: ten and twenty") && !containsLine(texts, "exopower watch: twenty and ten") {
		t.Errorf("the title does not name the nodes: %q", texts)
	}
	if all := strings.Join(texts, "\n"); !strings.Contains(all, "\n2 nodes, ") || strings.Contains(all, dir) {
		t.Errorf("the title does not give the summary, or names the file's folder %s: %q", dir, texts)
	}
	pngPath := filepath.Join(dir, "w.png")
	exopower(t, "plot", in, "-o", pngPath)
	f, err := os.Open(pngPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Errorf("%s does not decode as PNG: %v", pngPath, err)
	}
}

func containsLine(lines []string, want string) bool {
	for _, l := range lines {
		if l == want {
			return true
		}
	}
	return false
}

// What has no time series, or is not what plot takes, is refused with
// what to plot instead, and no picture is written.
func TestPlotRefusesWhatHasNoTimeSeries(t *testing.T) {
	t.Parallel()
	one := &wire.Summary{SchemaVersion: 1, Type: "summary", Warnings: []string{}}
	nodeRun, err := json.Marshal(&wire.Summary{SchemaVersion: 1, Type: "summary", Warnings: []string{},
		Nodes: []wire.NodeSummary{{Summary: one, Node: "a", URL: "http://a:9101"}, {Summary: one, Node: "b", URL: "local"}}})
	if err != nil {
		t.Fatal(err)
	}
	sample := `{"schema_version":1,"type":"sample","time":"2026-01-02T03:04:05Z","window_seconds":0.1,"power_watts":{"total":1,"cpu":1,"gpu":0,"ane":0},"energy_joules":{"total":0.1,"cpu":0.1,"gpu":0,"ane":0},"thermal_pressure":"Nominal","node":"a"}`
	for _, tc := range []struct {
		name, input string
		want        []string
	}{
		{"a run over several nodes", string(nodeRun), []string{
			"exopower: error: in: a summary of several nodes (run --node --json) has no time series to plot",
			"exopower: hint: plot what exopower watch --node --json writes over the same time, or each Mac's own exopower run --samples FILE"}},
		{"a watch line with a time that is not one", strings.Replace(sample, "2026-01-02T03:04:05Z", "yesterday", 1), []string{
			`exopower: error: in: line 1: its time "yesterday" is not RFC 3339`}},
		{"a watch line of an unknown type", sample + "\n" + strings.Replace(sample, `"sample"`, `"window"`, 1), []string{
			`exopower: error: in: line 2: a line of type "window", not one of watch --node --json`}},
		{"a bench without a run", `{"type":"bench","complete":false,"baseline":null,"results":[{"command":"x","runs":[]}]}`, []string{
			"exopower: error: in: a bench without a run: nothing to plot", "exopower: hint: plot a bench that made at least one run"}},
		{"a watch without a window", `{"type":"total","time":"2026-01-02T03:04:05Z"}`, []string{
			"exopower: error: in: watch --node --json lines without a node's window: nothing to plot"}},
		{"a bench that does not decode", `{"type":"bench","results":7}`, []string{
			"exopower: error: in: a bench's JSON: json: cannot unmarshal number into Go struct field Report.results of type []bench.Result"}},
	} {
		dir := t.TempDir()
		in, pic := filepath.Join(dir, "in"), filepath.Join(dir, "p.svg")
		if err := os.WriteFile(in, []byte(tc.input), 0o644); err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), []string{"plot", in, "-o", pic},
			&cli.Streams{Out: &stdout, Err: &stderr, Getenv: func(string) string { return "" }})
		got := strings.ReplaceAll(stderr.String(), in, "in")
		for _, w := range tc.want {
			if !strings.Contains(got, w+"\n") {
				t.Errorf("%s: stderr %q lacks %q", tc.name, got, w)
			}
		}
		if code != 125 {
			t.Errorf("%s: exit status %d, want 125", tc.name, code)
		}
		if _, err := os.Stat(pic); err == nil {
			t.Errorf("%s: a picture was written", tc.name)
		}
	}
}
