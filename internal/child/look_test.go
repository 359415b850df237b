package child

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// lookFixture makes, in a new current directory, an executable here and
// two directories for PATH: bin with an executable tool and a plain file
// that is not executable, other with an executable plain.
func lookFixture(t *testing.T) (bin, other string) {
	dir := t.TempDir()
	bin, other = filepath.Join(dir, "bin"), filepath.Join(dir, "other")
	for _, d := range []string{bin, other} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for path, mode := range map[string]os.FileMode{
		filepath.Join(bin, "tool"):    0o755,
		filepath.Join(bin, "plain"):   0o644,
		filepath.Join(other, "plain"): 0o755,
		filepath.Join(dir, "here"):    0o755,
	} {
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	return bin, other
}

func TestLook(t *testing.T) {
	bin, other := lookFixture(t)
	for _, tt := range []struct {
		name, command, path string
		want                string // the path found
		status              int    // or the *Error's status
		message             string
		is                  error
	}{
		{name: "found in PATH", command: "tool", path: bin, want: filepath.Join(bin, "tool")},
		{name: "found further on in PATH", command: "tool", path: other + ":" + bin, want: filepath.Join(bin, "tool")},
		{name: "one that cannot be executed does not hide the next", command: "plain", path: bin + ":" + other, want: filepath.Join(other, "plain")},
		{name: "a name with a slash is not looked for", command: "./here", path: bin, want: "./here"},
		{name: "127 when in no directory of PATH", command: "no-such-command-here", path: bin + ":" + other,
			status: 127, message: "no-such-command-here: command not found", is: exec.ErrNotFound},
		{name: "127 with an empty PATH", command: "tool", path: "",
			status: 127, message: "tool: command not found", is: exec.ErrNotFound},
		{name: "127 for a path to no file", command: "./missing", path: bin,
			status: 127, message: "./missing: command not found", is: fs.ErrNotExist},
		{name: "126 for a file that is not executable", command: "bin/plain", path: bin,
			status: 126, message: "bin/plain: cannot execute: permission denied", is: fs.ErrPermission},
		{name: "126 for a directory", command: "./", path: bin,
			status: 126, message: "./: cannot execute: is a directory"},
		{name: "126 when found through the current directory in PATH", command: "here", path: bin + "::" + other,
			status: 126, message: "here: cannot execute: " + exec.ErrDot.Error(), is: exec.ErrDot},
		{name: "126 when found through a relative directory in PATH", command: "tool", path: "bin",
			status: 126, message: "tool: cannot execute: " + exec.ErrDot.Error(), is: exec.ErrDot},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Look(tt.command, tt.path)
			if tt.status == 0 {
				if err != nil || got != tt.want {
					t.Errorf("Look(%q, %q) = %q, %v; want %q", tt.command, tt.path, got, err, tt.want)
				}
				return
			}
			var ce *Error
			if !errors.As(err, &ce) || ce.Status != tt.status || err.Error() != tt.message || got != "" {
				t.Fatalf("Look(%q, %q) = %q, %v (%#v); want status %d, %q", tt.command, tt.path, got, err, err, tt.status, tt.message)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("%v does not wrap %v", err, tt.is)
			}
		})
	}
}
