package child

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/exopower/exopower/internal/cli"
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
	// Scripts whose interpreter is missing: alone, with an argument, and
	// one in PATH.
	for path, line := range map[string]string{
		filepath.Join(dir, "orphan"):      "#!/no/such/interpreter\n",
		filepath.Join(dir, "orphan-args"): "#! /no/such/python3 -u\necho hi\n",
		filepath.Join(other, "orphan"):    "#!/no/such/interpreter\n",
	} {
		if err := os.WriteFile(path, []byte(line), 0o755); err != nil {
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
		{name: "127 for a script whose interpreter is missing, naming it", command: "./orphan", path: bin,
			status: 127, message: "./orphan: bad interpreter: /no/such/interpreter: no such file or directory", is: fs.ErrNotExist},
		{name: "the interpreter is the first word of the #! line", command: "./orphan-args", path: bin,
			status: 127, message: "./orphan-args: bad interpreter: /no/such/python3: no such file or directory", is: fs.ErrNotExist},
		{name: "127 for a script in PATH whose interpreter is missing", command: "orphan", path: bin + ":" + other,
			status: 127, message: filepath.Join(other, "orphan") + ": bad interpreter: /no/such/interpreter: no such file or directory", is: fs.ErrNotExist},
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
			got, err := Look(tt.command, tt.path, nil)
			if tt.status == 0 {
				if err != nil || got != tt.want {
					t.Errorf("Look(%q, %q) = %q, %v; want %q", tt.command, tt.path, got, err, tt.want)
				}
				return
			}
			var ce *cli.Error
			if !errors.As(err, &ce) || ce.Status != tt.status || err.Error() != tt.message || got != "" {
				t.Fatalf("Look(%q, %q) = %q, %v (%#v); want status %d, %q", tt.command, tt.path, got, err, err, tt.status, tt.message)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("%v does not wrap %v", err, tt.is)
			}
		})
	}
}

// Under sudo, what the command may run is the invoking user's to say, not
// root's: a file only root may execute, or one in a directory the user
// cannot enter, is refused before anything starts.
func TestLookChecksAsTheUserTheCommandRunsAs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make files that only root may run")
	}
	dir := t.TempDir()
	// The test's directories are root's alone (0700) up to the top.
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	locked := filepath.Join(dir, "locked")
	if err := os.Mkdir(locked, 0o700); err != nil {
		t.Fatal(err)
	}
	for path, mode := range map[string]os.FileMode{
		filepath.Join(dir, "root-only"):   0o700,
		filepath.Join(dir, "group-only"):  0o750,
		filepath.Join(dir, "everyone"):    0o755,
		filepath.Join(locked, "everyone"): 0o755,
	} {
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
	}
	nobody := &syscall.Credential{Uid: 65534, Gid: 65534}
	member := &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{0}}
	for _, tt := range []struct {
		name    string
		command string
		cred    *syscall.Credential
		status  int // 0: found
	}{
		{"root may run a file only root may", filepath.Join(dir, "root-only"), nil, 0},
		{"the user may not", filepath.Join(dir, "root-only"), nobody, 126},
		{"a group's member may run what the group may", filepath.Join(dir, "group-only"), member, 0},
		{"another user may not", filepath.Join(dir, "group-only"), nobody, 126},
		{"everyone may run what everyone may", filepath.Join(dir, "everyone"), nobody, 0},
		{"not in a directory the user cannot enter", filepath.Join(locked, "everyone"), nobody, 126},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Look(tt.command, "", tt.cred)
			if tt.status == 0 {
				if err != nil || got != tt.command {
					t.Errorf("Look(%q) = %q, %v; want it found", tt.command, got, err)
				}
				return
			}
			var ce *cli.Error
			if !errors.As(err, &ce) || ce.Status != tt.status || !errors.Is(err, fs.ErrPermission) {
				t.Errorf("Look(%q) = %q, %v; want status %d, permission denied", tt.command, got, err, tt.status)
			}
		})
	}
	// In PATH, as a shell: one the user cannot run does not hide the next.
	if got, err := Look("everyone", locked+":"+dir, nobody); err != nil || got != filepath.Join(dir, "everyone") {
		t.Errorf("Look in PATH = %q, %v; want the one the user may run", got, err)
	}
}
