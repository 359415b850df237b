package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
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

// The README opens with run's summary over the fake, under sudo, as run
// prints it: the same lines, labels, units and layout; only the figures
// (and the command's own argument) may differ. In a root shell without
// sudo (a container's, where the fake is tried), run first notes that the
// command runs as root; the README quotes that note, where it shows how to
// try exopower without a Mac.
func TestTheREADMEShowsRunAsItPrints(t *testing.T) {
	t.Parallel()
	want := readmeOutput(t, "run")
	if len(want) == 0 || !strings.HasPrefix(want[0], "$ sudo exopower run -- ") {
		t.Fatalf("the README's run block begins %q, want the command typed, $ sudo exopower run -- ...", want[:min(len(want), 1)])
	}
	want = want[1:]
	figures := regexp.MustCompile(`[0-9]+(\.[0-9]+)?`)
	shape := func(l string) string { return strings.Join(strings.Fields(figures.ReplaceAllString(l, "#")), " ") }
	summary := func(env ...string) []string {
		t.Helper()
		cmd, _ := exopowerCmd(t, "run", "--", "sleep", "0.5")
		cmd.Env = append(cmd.Env, env...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if out, err := cmd.Output(); err != nil || len(out) != 0 {
			t.Fatalf("exopower run: %v, stdout %q\n%s", err, out, stderr.Bytes())
		}
		return strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
	}
	compare := func(how string, got []string) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s, run printed %d lines, the README shows %d:\n%s\nREADME:\n%s", how, len(got), len(want), strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		for i := range got {
			if shape(got[i]) != shape(want[i]) {
				t.Errorf("%s, line %d: run printed %q, the README shows %q", how, i+1, got[i], want[i])
			}
		}
	}
	// As sudo leaves it for root's own command: SUDO_UID=0.
	compare("under sudo", summary("SUDO_UID=0", "SUDO_GID=0"))
	if os.Geteuid() != 0 {
		t.Skip("not root: the root shell's note is not printed here")
	}
	got := summary("SUDO_UID=", "SUDO_GID=")
	if len(got) == 0 || !strings.HasPrefix(got[0], "exopower: note: ") {
		t.Fatalf("as root without sudo, run printed first %q, want its note", got[:min(len(got), 1)])
	}
	if !strings.Contains(string(mustRead(t, readmeMD)), "`"+got[0]+"`") {
		t.Errorf("the README does not quote the note that a root shell gets first, `%s`", got[0])
	}
	compare("as root without sudo, after the note", got[1:])
}

// The README is a front door, at most 400 lines: what a new user needs
// first, with the reference in docs/, where its links point.
func TestTheREADMEStaysAFrontDoor(t *testing.T) {
	t.Parallel()
	if n := strings.Count(string(mustRead(t, readmeMD)), "\n"); n > 400 {
		t.Errorf("%s has %d lines, over 400: move reference material to the page of docs/ that holds it", readmeMD, n)
	}
}
