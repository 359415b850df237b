package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var readmeMD = filepath.Join("..", "..", "README.md")

// readmeOutput returns the lines of the README's code block marked
// <!-- output: name -->: what a command prints, as the README shows it.
func readmeOutput(t *testing.T, name string) []string {
	t.Helper()
	marker := "\n<!-- output: " + name + " -->\n```\n"
	_, after, ok := strings.Cut(string(mustRead(t, readmeMD)), marker)
	if !ok {
		t.Fatalf("%s has no %q followed by a code block", readmeMD, strings.TrimSpace(marker))
	}
	block, _, ok := strings.Cut(after, "\n```\n")
	if !ok {
		t.Fatalf("%s: the block after %q never ends", readmeMD, name)
	}
	return strings.Split(block, "\n")
}

// The README shows doctor on Linux with the fake, as root, line for line
// as it prints it: every check in its order, each fix, and the count of
// failures. Only what a run changes may differ: the test sample's power,
// the fake's path, the address where serve is looked for.
func TestTheREADMEShowsDoctorAsItPrints(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("the README shows doctor as root")
	}
	// Port 1: nothing listens there, whatever listens at serve's own.
	cmd, _ := exopowerCmd(t, "doctor", "--serve", "127.0.0.1:1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, _ := cmd.Output()
	got := append(strings.Split(strings.TrimSuffix(string(out), "\n"), "\n"), strings.TrimSuffix(stderr.String(), "\n"))
	want := readmeOutput(t, "doctor")
	if len(got) != len(want) {
		t.Fatalf("doctor printed %d lines, the README shows %d:\n%s\nREADME:\n%s", len(got), len(want), strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i := range got {
		g, w := got[i], want[i]
		if !strings.HasPrefix(w, " ") && !strings.HasPrefix(w, "exopower:") {
			// A check's line: its status and name; the rest varies.
			g, w = g[:min(len(g), 21)], w[:min(len(w), 21)]
		}
		if g != w {
			t.Errorf("line %d: doctor printed %q, the README shows %q", i+1, got[i], want[i])
		}
	}
}
