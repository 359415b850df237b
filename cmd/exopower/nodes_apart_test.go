package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exopower/exopower/internal/wire"
)

// elsewhere is node n standing in for another Mac's serve, as every serve
// of these tests does, though they run on this machine: its status gives
// another boot_id than this machine's, so that local may be named beside
// it (which a serve on this Mac would be refused).
func elsewhere(t *testing.T, n *served) *served {
	t.Helper()
	return front(t, n, rewrite("/v1/status", func(m map[string]any) { m["boot_id"] = "00000000000000000000000000000001" }))
}

// A Mac given twice is refused before anything runs, naming both ways it
// was given, with the hint: one serve under two URLs (127.0.0.1 and
// localhost), and this machine as local beside its own serve.
func TestAMacGivenTwiceIsRefusedBeforeAnythingRuns(t *testing.T) {
	t.Parallel() // it waits on its node in real time, not on the CPU
	node := startNode(t, "mac1", "0=10,0,0")
	byName := strings.Replace(node.url, "127.0.0.1", "localhost", 1)
	for _, tt := range []struct {
		nodes []string
		want  string
	}{
		{[]string{node.url, byName}, "node " + node.url + " and node " + byName + " are one exopower serve (instance_id "},
		{[]string{node.url, "local"}, "node " + node.url + " is a serve on this Mac (its boot_id is this Mac's), which node local measures too"},
		{[]string{"--skip-unreachable", "local", byName}, "node " + byName + " is a serve on this Mac"},
	} {
		args := []string{"run"}
		for _, n := range tt.nodes {
			if strings.HasPrefix(n, "--") {
				args = append(args, n)
				continue
			}
			args = append(args, "--node", n)
		}
		cmd, dir := exopowerCmd(t, append(args, "--", "touch", "ran")...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		code := exitCode(t, cmd.Run())
		if code != 125 || !strings.Contains(stderr.String(), tt.want) || !strings.Contains(stderr.String(), "exopower: hint: give each Mac once") {
			t.Errorf("%q: status %d, stderr %q; want 125, %q and the hint", tt.nodes, code, stderr.String(), tt.want)
		}
		if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
			t.Errorf("%q: the command ran", tt.nodes)
		}
	}
}

// Two Macs of one name, watched: each node's lines carry its own name and
// a label that tells it apart (its name and address), so do the
// summary's rows and the text lines, and the plot of the lines draws a
// line for each, named by its label.
func TestWatchOverTwoNodesOfOneNameLabelsThemApart(t *testing.T) {
	t.Parallel() // it waits on its nodes in real time, not on the CPU
	nodes := []*served{startNode(t, "mac1", "0=10,0,0"), startNode(t, "mac1", "0=20,0,0")}
	labels := map[string]bool{"mac1 (" + nodes[0].addr + ")": true, "mac1 (" + nodes[1].addr + ")": true}
	cmd, _ := exopowerCmd(t, "watch", "--json", "-n", "3", "--node", nodes[0].url, "--node", nodes[1].url)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	ls := strings.Split(strings.TrimSpace(string(out)), "\n")
	seen := map[string]int{}
	for _, l := range ls[:len(ls)-1] {
		var sl wire.SampleLine
		if err := json.Unmarshal([]byte(l), &sl); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		if sl.Type == "sample" && (sl.Node != "mac1" || !labels[sl.Label]) {
			t.Errorf("line %s: want node mac1 and one of the labels %v", l, labels)
		}
		seen[sl.Label]++
	}
	var sum wire.Summary
	if err := json.Unmarshal([]byte(ls[len(ls)-1]), &sum); err != nil || len(sum.Nodes) != 2 {
		t.Fatalf("summary %q: %v", ls[len(ls)-1], err)
	}
	for label := range labels {
		if seen[label] < 3 {
			t.Errorf("%d lines of %q, want 3 at least", seen[label], label)
		}
	}
	if sum.Nodes[0].Label == sum.Nodes[1].Label || !labels[sum.Nodes[0].Label] || !labels[sum.Nodes[1].Label] {
		t.Errorf("the summary's nodes are labelled %q and %q, want %v", sum.Nodes[0].Label, sum.Nodes[1].Label, labels)
	}
	in := filepath.Join(t.TempDir(), "watch.ndjson")
	if err := os.WriteFile(in, out, 0o644); err != nil {
		t.Fatal(err)
	}
	svg := filepath.Join(t.TempDir(), "w.svg")
	exopower(t, "plot", in, "-o", svg)
	texts := strings.Split(svgTexts(t, svg), "\n")
	for label := range labels {
		if !containsLine(texts, label) {
			t.Errorf("the plot names no line %q: %q", label, texts)
		}
	}
	cmd, _ = exopowerCmd(t, "watch", "-n", "2", "--node", nodes[0].url, "--node", nodes[1].url)
	text, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatal(err)
	}
	for label := range labels {
		if strings.Count(string(text), label+" ") < 3 {
			t.Errorf("the text names %q in fewer than its 2 lines and its row of the summary:\n%s", label, text)
		}
	}
}
