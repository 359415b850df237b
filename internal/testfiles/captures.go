package testfiles

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// CapturesEnv names the folder of real powermetrics captures from real
// Macs (byte-for-byte copies of powermetrics -f plist output), which the
// decoder's compatibility tests read in place; the project keeps no copy.
// Unset, those tests skip, saying so; set, the folder must be there, and a
// test that cannot read it fails. .ci/run sets it where the folder is
// beside the clone, as ../shared/powermetrics-captures.
const CapturesEnv = "EXOPOWER_TEST_CAPTURES"

// Captures returns the folder of real captures that CapturesEnv names,
// and skips t when it names none.
func Captures(t testing.TB) string {
	t.Helper()
	dir, ok := CapturesIfNamed(t)
	if !ok {
		t.Skip(capturesUnnamed)
	}
	return dir
}

// CapturesIfNamed returns the folder of real captures that CapturesEnv
// names and true, or false when it names none, for a test that reads them
// beside other files. A folder named that cannot be used fails t.
func CapturesIfNamed(t testing.TB) (string, bool) {
	t.Helper()
	dir, err := capturesDir(os.Getenv(CapturesEnv))
	if err != nil {
		t.Fatal(err)
	}
	return dir, dir != ""
}

const capturesUnnamed = CapturesEnv + " is not set: the real powermetrics captures are not tested " +
	"(.ci/run sets it where they are beside the clone, in ../shared/powermetrics-captures)"

// capturesDir checks the folder that value (CapturesEnv's) names: it must
// be an absolute path (the tests run in their packages' folders) to a
// folder that holds .plist files. An empty value names none: "" and nil.
func capturesDir(value string) (string, error) {
	if value == "" {
		return "", nil
	}
	bad := func(why string, args ...any) error {
		return fmt.Errorf("%s=%s: %s", CapturesEnv, value, fmt.Sprintf(why, args...))
	}
	if !filepath.IsAbs(value) {
		return "", bad("not an absolute path; the tests run in their packages' folders (from the clone: %s=$PWD/%s)", CapturesEnv, value)
	}
	fi, err := os.Stat(value)
	if errors.Is(err, os.ErrNotExist) {
		return "", bad("no such folder: the real powermetrics captures are tested where it names them; unset it to skip them")
	}
	if err != nil {
		return "", bad("%v", err)
	}
	if !fi.IsDir() {
		return "", bad("not a folder")
	}
	plists, err := filepath.Glob(filepath.Join(value, "*.plist"))
	if err != nil || len(plists) == 0 {
		return "", bad("no .plist file in it: not a folder of powermetrics captures")
	}
	return value, nil
}
