package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
