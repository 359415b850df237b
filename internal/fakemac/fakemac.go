// Package fakemac runs a binding's tests against a fake of macOS's
// libraries: the fake, in C (a package's fakelib/fake.c, on this
// folder's fakemac.h), built with gcc into a shared library, and each of
// the binding's scenarios in a process of its own, since the fake aborts
// on what would crash on a Mac. internal/ioreport's and internal/attrib's
// tests use it.
package fakemac

import (
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Build builds fakelib/fake.c of the package under test, with this
// folder's fakemac.h, into a shared library, and returns its path. what
// says what the fake stands in for, in the message when gcc is missing:
// a failure in CI, a skip elsewhere.
func Build(t testing.TB, what string) string {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		msg := "gcc is missing: the binding's test builds its fake of " + what + " with it (apt-get install gcc)"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	so := filepath.Join(t.TempDir(), "libfake.so")
	out, err := exec.Command(gcc, "-shared", "-fPIC", "-std=c11", "-Wall", "-Wextra", "-Werror", "-I", "../fakemac", "-o", so, "fakelib/fake.c").CombinedOutput()
	if err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return so
}

// Scenarios runs each of names, in order, as a subtest whose process is
// this test binary again, running the test named scenario with the
// environment env(name) besides this one's. A scenario passes where
// that test passed; its process's output is shown where it did not.
func Scenarios[V any](t *testing.T, names map[string]V, scenario string, env func(name string) []string) {
	for _, name := range slices.Sorted(maps.Keys(names)) {
		t.Run(name, func(t *testing.T) {
			// A deadline for a hung process only: a scenario takes some
			// milliseconds.
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^"+scenario+"$", "-test.v", "-test.count=1")
			cmd.Env = append(append(os.Environ(), "GOTRACEBACK=none"), env(name)...)
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "--- PASS: "+scenario) {
				t.Errorf("%v\n%s", err, out)
			}
		})
	}
}
