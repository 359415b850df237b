package access

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/exopower/exopower/internal/testfiles"
)

// Open reads regular files only, and what is not one is refused without
// waiting for it: a FIFO with no writer would hold open(2) for ever.
func TestOpenRefusesWhatIsNotAFileWithoutWaiting(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	fifo := filepath.Join(dir, "fifo")
	if err := os.WriteFile(file, []byte("the content"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("fifo", filepath.Join(dir, "to-fifo")); err != nil {
		t.Fatal(err)
	}
	creds := []*syscall.Credential{nil}
	if os.Geteuid() == 0 {
		// Root judged as root by the bits: the same answers, by the walk.
		creds = append(creds, &syscall.Credential{Uid: 0, Gid: 0})
	}
	for _, cred := range creds {
		f, err := Open(file, cred)
		if err != nil {
			t.Fatalf("%v: a file: %v", cred, err)
		}
		b, err := io.ReadAll(f)
		f.Close()
		if string(b) != "the content" || err != nil {
			t.Errorf("%v: read %q, %v", cred, b, err)
		}
		for _, tt := range []struct{ path, what string }{
			{fifo, "a FIFO"},
			{filepath.Join(dir, "to-fifo"), "a FIFO"},
			{dir, "a directory"},
			{dir + "/.", "a directory"},
			{"/", "a directory"},
			{"/dev/null", "a device"},
		} {
			_, err := Open(tt.path, cred)
			var nf *NotFileError
			if !errors.As(err, &nf) || nf.What != tt.what || nf.Path != tt.path {
				t.Errorf("%v: %s: %v, want %s", cred, tt.path, err, tt.what)
			}
		}
		if _, err := Open(filepath.Join(dir, "missing"), cred); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%v: a missing file: %v", cred, err)
		}
		if _, err := Open("", cred); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%v: no path: %v", cred, err)
		}
	}
}

// Under sudo the file is read as the user who ran sudo would read it:
// every directory on the way searchable and the file readable by that
// user's bits, links followed as the kernel follows them, and never
// further than the user could go.
func TestOpenReadsAsTheUserWould(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give files to other users")
	}
	const uid, gid = 1000, 1000
	user := &syscall.Credential{Uid: uid, Gid: gid}
	top := testfiles.SearchableDir(t)
	mk := func(path string, mode os.FileMode, owner int) string {
		t.Helper()
		path = filepath.Join(top, path)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("content of "+filepath.Base(path)), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(path, owner, owner); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		return path
	}
	link := func(target, path string) string {
		t.Helper()
		path = filepath.Join(top, path)
		if err := os.Symlink(target, path); err != nil {
			t.Fatal(err)
		}
		return path
	}
	mine := mk("user/mine", 0o600, uid)
	roots := mk("roots", 0o600, 0)
	shared := mk("shared", 0o644, 0)
	hidden := mk("private/open-but-hidden", 0o644, 0)
	if err := os.Chmod(filepath.Join(top, "private"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(filepath.Join(top, "user"), uid, gid); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		path   string
		denied string // the path the error names, or "" to read it
	}{
		{"the user's own file", mine, ""},
		{"a file of root's that others may read", shared, ""},
		{"the same through .. and .", filepath.Join(top, "user", "..", ".", "shared"), ""},
		{"a file of root's that only root may read", roots, roots},
		{"a file others may read in a directory they may not search", hidden, filepath.Join(top, "private")},
		{"a link the user planted to root's file", link(roots, "user/planted"), filepath.Join(top, "user/planted")},
		{"a relative link to root's file", link("../roots", "user/relative"), filepath.Join(top, "user/relative")},
		{"a link into the directory the user may not search", link(hidden, "user/into-private"), filepath.Join(top, "private")},
		{"a link to the user's own file", link("mine", "user/to-mine"), ""},
		{"a link to a link to a readable file", link("to-mine", "user/to-to-mine"), ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Open(tt.path, user)
			if tt.denied == "" {
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				f.Close()
				return
			}
			var pe *fs.PathError
			if err == nil {
				f.Close()
			}
			if !errors.As(err, &pe) || !errors.Is(err, fs.ErrPermission) || pe.Path != tt.denied {
				t.Errorf("Open = %v, want permission denied on %s", err, tt.denied)
			}
		})
	}
	loop := link("loop", "user/loop")
	if _, err := Open(loop, user); !errors.Is(err, syscall.ELOOP) {
		t.Errorf("a link to itself: %v, want ELOOP", err)
	}
	t.Chdir(filepath.Join(top, "user"))
	if f, err := Open("mine", user); err != nil {
		t.Errorf("a relative path: %v", err)
	} else {
		f.Close()
	}
	if _, err := Open("../roots", user); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("a relative path to root's file: %v", err)
	}
}
