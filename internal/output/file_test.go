package output

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/exopower/exopower/internal/cli"
)

func TestCheckPathRefusesWhatCanNeverTakeTheSummary(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	fifo, sock := filepath.Join(dir, "fifo"), filepath.Join(dir, "sock")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	links := map[string]string{"loop": "loop", "astray": filepath.Join("no", "x.json"), "tofile": "file"}
	for name, to := range links {
		if err := os.Symlink(to, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name, path, want, hint string
	}{
		{"no -o is fine", "", "", ""},
		{"a new file in a folder that exists is fine", filepath.Join(dir, "new.json"), "", ""},
		{"an existing file is fine", file, "", ""},
		{"a link to a file is fine", filepath.Join(dir, "tofile"), "", ""},
		{"a FIFO that no one reads yet is fine, and not waited on", fifo, "", ""},
		{"a character device is fine", nullDevice(t), "", ""},
		{"a folder is refused", dir, "is a directory", "name a file, such as " + filepath.Join(dir, "summary.json")},
		{"a missing folder is refused", filepath.Join(dir, "no", "x.json"), "does not exist", "create it first"},
		{"a link into a missing folder is refused", filepath.Join(dir, "astray"), "a link to " + filepath.Join(dir, "no", "x.json") + "): directory " + filepath.Join(dir, "no") + " does not exist", "create it first"},
		{"a link to itself is refused", filepath.Join(dir, "loop"), "too many levels of symbolic links", "choose another path"},
		{"a file taken for a folder is refused", filepath.Join(file, "x.json"), "is not a directory", "choose another path"},
		{"a socket is refused", sock, "is a socket", "name a file"},
		{"a descriptor that is not open is refused", "/dev/fd/987654", "descriptor 987654 is not open", "choose another path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckPath("-o", tt.path, nil)
			if tt.want == "" {
				if err != nil {
					t.Errorf("CheckPath(%q) = %v, want nil", tt.path, err)
				}
				return
			}
			var e *cli.Error
			if !errors.As(err, &e) || !strings.Contains(err.Error(), tt.want) || len(e.Hints) == 0 || !strings.HasPrefix(e.Hints[0], tt.hint) {
				t.Errorf("CheckPath(%q) = %v (hints %q), want %q with the hint %q", tt.path, err, cli.HintsOf(err), tt.want, tt.hint)
			}
		})
	}
}

func TestCheckPathRefusesAFolderThatCannotBeWritten(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes anywhere")
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	if err := CheckPath("-o", filepath.Join(dir, "x.json"), nil); err == nil || !strings.Contains(err.Error(), "cannot write in") {
		t.Errorf("CheckPath = %v, want that it cannot write there", err)
	}
}

func TestWriteFileWritesTheWholeFileOrNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.json")
	if err := os.WriteFile(path, []byte("before"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := WriteFile(path, func(w io.Writer) error {
		io.WriteString(w, "half")
		return errors.New("disk full")
	}, nil)
	if b, _ := os.ReadFile(path); err == nil || string(b) != "before" {
		t.Errorf("a failed write: %v, the file holds %q; want the error and what it held before", err, b)
	}
	if err := WriteFile(path, func(w io.Writer) error { _, err := io.WriteString(w, "after"); return err }, nil); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "after" {
		t.Errorf("the file holds %q, want %q", b, "after")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*.tmp")); len(left) != 0 {
		t.Errorf("temporary files left behind: %q", left)
	}
}

func TestWriteFileGivesTheFileToItsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to give a file away")
	}
	path := filepath.Join(t.TempDir(), "s.json")
	if err := WriteFile(path, func(w io.Writer) error { return nil }, &syscall.Credential{Uid: 65534, Gid: 65534}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != 65534 || st.Gid != 65534 {
		t.Errorf("owner %d:%d, want 65534:65534", st.Uid, st.Gid)
	}
}

const summaryText = "the summary\n"

func writeTheSummary(path string, owner *syscall.Credential) error {
	return WriteFile(path, func(w io.Writer) error { _, err := io.WriteString(w, summaryText); return err }, owner)
}

// nullDevice is a character device that discards what it is given. For
// root it is a new node of /dev/null's device in a temporary folder:
// code that put a file in the device's place must not do it to the
// system's /dev/null.
func nullDevice(t *testing.T) string {
	if os.Geteuid() != 0 {
		return "/dev/null"
	}
	fi, err := os.Stat("/dev/null")
	if err != nil {
		t.Skipf("no /dev/null: %v", err)
	}
	path := filepath.Join(t.TempDir(), "null")
	if err := syscall.Mknod(path, syscall.S_IFCHR|0o666, int(fi.Sys().(*syscall.Stat_t).Rdev)); err != nil {
		t.Skipf("cannot make a device node: %v", err)
	}
	return path
}

// noTemporaryFiles fails the test if a temporary file is left in a folder.
func noTemporaryFiles(t *testing.T, dirs ...string) {
	t.Helper()
	for _, dir := range dirs {
		if left, _ := filepath.Glob(filepath.Join(dir, ".*.tmp")); len(left) != 0 {
			t.Errorf("temporary files left behind: %q", left)
		}
	}
}

// A link is followed, as cp and tee follow it: the link stays, and what it
// points to takes the summary, or is created with it. The temporary file
// is made beside the target, where a rename can put it in place.
func TestWriteFileWritesThroughASymbolicLink(t *testing.T) {
	for _, tc := range []struct {
		name   string
		exists bool
	}{{"to a file", true}, {"to nothing yet", false}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			target, link := filepath.Join(dir, "runs", "s.json"), filepath.Join(dir, "latest.json")
			if err := os.Mkdir(filepath.Dir(target), 0o755); err != nil {
				t.Fatal(err)
			}
			if tc.exists {
				if err := os.WriteFile(target, []byte("before"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Symlink(filepath.Join("runs", "s.json"), link); err != nil {
				t.Fatal(err)
			}
			if err := writeTheSummary(link, nil); err != nil {
				t.Fatal(err)
			}
			if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
				t.Errorf("the link is now %v (%v), want a link still", fi.Mode(), err)
			}
			if b, err := os.ReadFile(target); string(b) != summaryText {
				t.Errorf("the target holds %q (%v), want the summary", b, err)
			}
			noTemporaryFiles(t, dir, filepath.Dir(target))
		})
	}
}

// A FIFO is written in place, as to a pipe: no temporary file, no rename.
func TestWriteFileWritesIntoAFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	// Opened without waiting for a writer, the reader is there before
	// the summary is written.
	r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := writeTheSummary(path, nil); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(path); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("the FIFO is now %v (%v), want a FIFO still", fi.Mode(), err)
	}
	if b, err := io.ReadAll(r); string(b) != summaryText {
		t.Errorf("the reader got %q (%v), want the summary", b, err)
	}
}

// A FIFO that no one reads would hold exopower at its end until someone
// did; it is refused instead, and the summary goes elsewhere.
func TestWriteFileRefusesAFIFONoOneReads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := writeTheSummary(path, nil); err == nil || !strings.Contains(err.Error(), "no process reads it") {
		t.Errorf("WriteFile = %v, want that no process reads it", err)
	}
	if fi, err := os.Lstat(path); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("the FIFO is now %v (%v), want a FIFO still", fi.Mode(), err)
	}
}

func TestWriteFileWritesIntoACharacterDevice(t *testing.T) {
	path := nullDevice(t)
	if err := writeTheSummary(path, nil); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(path); err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
		t.Errorf("the device is now %v (%v), want a character device still", fi.Mode(), err)
	}
	noTemporaryFiles(t, filepath.Dir(path))
}

// /dev/stdout, /dev/fd/N and their like name a descriptor exopower holds:
// it writes there, after what the command wrote, as if to its own
// stdout. Opening the path anew would write over the start of a file, or
// replace it.
func TestWriteFileWritesToTheProcesssOwnDescriptor(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("the command's output\n"); err != nil {
		t.Fatal(err)
	}
	before, _ := f.Stat()
	name := fmt.Sprintf("/dev/fd/%d", f.Fd())
	if _, err := os.Stat(name); err != nil {
		t.Skipf("no %s: %v", name, err)
	}
	if err := writeTheSummary(name, nil); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "the command's output\n"+summaryText {
		t.Errorf("the file holds %q, want the command's output, then the summary", b)
	}
	if after, err := os.Stat(path); err != nil || !os.SameFile(before, after) {
		t.Errorf("the file was replaced (%v)", err)
	}
}

// An existing file keeps its mode, as cp keeps it: a summary kept private
// stays private.
func TestWriteFileKeepsAnExistingFilesMode(t *testing.T) {
	for _, perm := range []fs.FileMode{0o600, 0o640, 0o664} {
		t.Run(perm.String(), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.json")
			if err := os.WriteFile(path, []byte("before"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, perm); err != nil {
				t.Fatal(err)
			}
			if err := writeTheSummary(path, nil); err != nil {
				t.Fatal(err)
			}
			if fi, err := os.Stat(path); err != nil || fi.Mode() != perm {
				t.Errorf("mode %v (%v), want %v", fi.Mode(), err, perm)
			}
		})
	}
}

// A new file has the mode any tool gives it: 0666 less the umask.
func TestWriteFileGivesANewFileTheUmasksMode(t *testing.T) {
	for _, mask := range []int{0o027, 0o002} {
		t.Run(fmt.Sprintf("%03o", mask), func(t *testing.T) {
			old := syscall.Umask(mask)
			defer syscall.Umask(old)
			path := filepath.Join(t.TempDir(), "s.json")
			if err := writeTheSummary(path, nil); err != nil {
				t.Fatal(err)
			}
			if fi, err := os.Stat(path); err != nil || fi.Mode() != fs.FileMode(0o666&^mask) {
				t.Errorf("mode %v (%v), want %v", fi.Mode(), err, fs.FileMode(0o666&^mask))
			}
		})
	}
}

// An existing file keeps its owner: root writing it under sudo does not
// take it, nor give it to the user who ran sudo.
func TestWriteFileKeepsAnExistingFilesOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to give a file away")
	}
	path := filepath.Join(t.TempDir(), "s.json")
	if err := os.WriteFile(path, []byte("before"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	for _, owner := range []*syscall.Credential{nil, {Uid: 1, Gid: 1}} {
		if err := writeTheSummary(path, owner); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st := fi.Sys().(*syscall.Stat_t); st.Uid != 65534 || st.Gid != 65534 || fi.Mode() != 0o640 {
			t.Errorf("written with the owner %v: %d:%d %v, want 65534:65534 -rw-r-----", owner, st.Uid, st.Gid, fi.Mode())
		}
	}
}

// Under sudo the path must be one that the user who ran sudo could write:
// root would otherwise write through a planted link, or into root's own
// files and directories, on that user's behalf.
func TestCheckPathAsTheUserWhoRanSudo(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make files of other users")
	}
	dir := t.TempDir() // root's, 0700 up to the top: no matter, the checks are of the last step
	users := filepath.Join(dir, "users")
	if err := os.Mkdir(users, 0o755); err != nil {
		t.Fatal(err)
	}
	rootsFile, usersFile := filepath.Join(dir, "roots"), filepath.Join(dir, "users-file")
	for _, f := range []string{rootsFile, usersFile} {
		if err := os.WriteFile(f, []byte("kept\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{users, usersFile} {
		if err := os.Chown(p, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(rootsFile, filepath.Join(users, "planted")); err != nil {
		t.Fatal(err)
	}
	nobody := &syscall.Credential{Uid: 65534, Gid: 65534}
	for _, tt := range []struct {
		name, path string
		ok         bool
	}{
		{"a new file in the user's directory", filepath.Join(users, "sum.json"), true},
		{"the user's own file, in root's directory", usersFile, true},
		{"a device anyone may write", "/dev/null", true},
		{"a new file in root's directory", filepath.Join(dir, "sum.json"), false},
		{"root's file", rootsFile, false},
		{"a link to root's file, in the user's directory", filepath.Join(users, "planted"), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckPath("-o", tt.path, nobody)
			if tt.ok != (err == nil) {
				t.Fatalf("CheckPath(%q) = %v, want ok=%v", tt.path, err, tt.ok)
			}
			if err != nil && !strings.Contains(err.Error(), "the user who ran sudo (uid 65534) may not write") {
				t.Errorf("CheckPath(%q) = %v: does not say who may not write", tt.path, err)
			}
			if err := CheckPath("-o", tt.path, nil); err != nil {
				t.Errorf("CheckPath(%q) for root = %v, want nil", tt.path, err)
			}
		})
	}
}

// The messages name the flag that gave the path, whichever it is.
func TestCheckPathNamesTheFlag(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct{ path, want string }{
		{dir, "--export-csv " + dir + " is a directory"},
		{filepath.Join(dir, "no", "b.csv"), "--export-csv " + filepath.Join(dir, "no", "b.csv") + ": directory " + filepath.Join(dir, "no") + " does not exist"},
	} {
		if err := CheckPath("--export-csv", tt.path, nil); err == nil || err.Error() != tt.want {
			t.Errorf("CheckPath(--export-csv, %q) = %v, want %q", tt.path, err, tt.want)
		}
	}
}
