//go:build release

// The builds of the release script and the formula take the CPU for
// tens of seconds: .ci/run runs them as a step of their own (go test
// -tags release), not inside the race-detected suite.

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestFormulaRuns checks the formula's Ruby, where ruby is installed: its
// syntax, the service it declares, and its test block run against an
// exopower stamped with the formula's version, as brew test would.
func TestFormulaRuns(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("ruby"); err != nil {
		t.Skip("no ruby to check the formula with")
	}
	if b, err := exec.Command("ruby", "-c", formulaPath).CombinedOutput(); err != nil {
		t.Fatalf("ruby -c: %v\n%s", err, b)
	}
	dir := t.TempDir()
	build := exec.Command("go", "build", "-ldflags", "-X main.version=v9.8.7", "-o", filepath.Join(dir, "exopower"), ".")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	shim := filepath.Join(dir, "shim.rb")
	if err := os.WriteFile(shim, []byte(formulaShim), 0o644); err != nil {
		t.Fatal(err)
	}
	run := exec.Command("ruby", shim, formulaPath)
	run.Env = append(os.Environ(), "BIN="+dir)
	b, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("the formula's test block: %v\n%s", err, b)
	}
	out := string(b)
	for _, want := range []string{
		"service run /opt/homebrew/opt/exopower/bin/exopower serve\n",
		"service require_root true\n",
		"service log_path /opt/homebrew/var/log/exopower.log\n",
		"test passed\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
}
