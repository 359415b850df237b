package testfiles

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The captures are tested only where EXOPOWER_TEST_CAPTURES names their
// folder; a folder named that is not there, or is not one of captures,
// is an error that says what is wrong, never a skip.
func TestTheCapturesFolderIsNamedOrNotTested(t *testing.T) {
	root := t.TempDir()
	captures := filepath.Join(root, "powermetrics-captures")
	empty := filepath.Join(root, "empty")
	for _, d := range []string{captures, empty} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(captures, "m1.plist"), []byte("<plist/>"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(captures, "m1.plist")
	for _, tt := range []struct {
		name, value, want, err string
	}{
		{"unset, nothing is named and nothing fails", "", "", ""},
		{"a folder of captures is named", captures, captures, ""},
		{"a folder that is not there fails", filepath.Join(root, "gone"), "", "no such folder: the real powermetrics captures are tested where it names them"},
		{"a relative path fails, with the absolute one to give", "../shared/powermetrics-captures", "", "not an absolute path; the tests run in their packages' folders (from the clone: EXOPOWER_TEST_CAPTURES=$PWD/../shared/powermetrics-captures)"},
		{"a file fails", file, "", "not a folder"},
		{"a folder without a capture fails", empty, "", "no .plist file in it"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := capturesDir(tt.value)
			if got != tt.want {
				t.Errorf("folder %q, want %q", got, tt.want)
			}
			switch {
			case tt.err == "" && err != nil:
				t.Errorf("error %v, want none", err)
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err) || !strings.HasPrefix(err.Error(), CapturesEnv+"="+tt.value+": ")):
				t.Errorf("error %v, want %s=%s: ...%s...", err, CapturesEnv, tt.value, tt.err)
			}
		})
	}
}
