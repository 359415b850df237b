package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Each command's block is written as soon as its runs are done, as
// hyperfine writes each benchmark, not once the closing baseline has
// ended: the second command waits (600 times 50 ms at most) for a file
// that the test writes once it has read the first command's block, and
// fails without it.
func TestEachCommandsBlockIsWrittenAsItsRunsEnd(t *testing.T) {
	t.Parallel()
	cmd, dir := exopowerCmd(t, "bench", "-r", "2", "--baseline", "500ms", "true",
		"i=0; while [ ! -e seen ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done; test -e seen")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ch := lines(stdout)
	first := await(t, ch, "Range (min … max):")
	if err := os.WriteFile(filepath.Join(dir, "seen"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var rest []string
	for l := range ch {
		rest = append(rest, l)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exopower bench: %v: the second command did not see the first one's block in time\n%s", err, stderr.String())
	}
	if first[0] != "Benchmark 1: true" || strings.Contains(strings.Join(first, "\n"), "Idle baseline") {
		t.Errorf("the first block:\n%s", strings.Join(first, "\n"))
	}
	if all := strings.Join(rest, "\n"); !strings.Contains(all, "Benchmark 2: i=0;") || !strings.Contains(all, "\nIdle baseline: ") ||
		strings.Index(all, "Benchmark 2") > strings.Index(all, "Idle baseline") {
		t.Errorf("after the first block:\n%s", all)
	}
}
