package powermetrics

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// CapturesDir holds real captures from real Macs, beside the project; they
// are read in place, never copied in.
const CapturesDir = "../../../shared/powermetrics-captures"

// MissingCaptures reports whether err, from reading CapturesDir or a file
// in it, says that it is not there, for the test to skip or go on without
// it. In CI (CI set non-empty) it fails the test instead: a skip there would
// let a run that never saw real output pass for one that did.
func MissingCaptures(t testing.TB, err error) bool {
	t.Helper()
	switch {
	case err == nil:
		return false
	case !errors.Is(err, fs.ErrNotExist):
		t.Fatal(err)
	case os.Getenv("CI") != "":
		dir, _ := filepath.Abs(CapturesDir)
		t.Fatalf("CI is set, and in CI the real captures are tested, not skipped: %v (the shared captures belong in %s)", err, dir)
	}
	return true
}
