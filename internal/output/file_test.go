package output

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestCheckPathRefusesWhatCanNeverTakeTheSummary(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, want, hint string
	}{
		{"no -o is fine", "", "", ""},
		{"a new file in a folder that exists is fine", filepath.Join(dir, "new.json"), "", ""},
		{"an existing file is fine", file, "", ""},
		{"a folder is refused", dir, "is a directory", "name a file, such as " + filepath.Join(dir, "summary.json")},
		{"a missing folder is refused", filepath.Join(dir, "no", "x.json"), "does not exist", "create it first"},
		{"a file taken for a folder is refused", filepath.Join(file, "x.json"), "is not a directory", "choose another path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckPath(tt.path)
			if tt.want == "" {
				if err != nil {
					t.Errorf("CheckPath(%q) = %v, want nil", tt.path, err)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || !strings.Contains(err.Error(), tt.want) || len(e.Hints()) == 0 || !strings.HasPrefix(e.Hints()[0], tt.hint) {
				t.Errorf("CheckPath(%q) = %v (hints %q), want %q with the hint %q", tt.path, err, hintsOf(err), tt.want, tt.hint)
			}
		})
	}
}

func hintsOf(err error) []string {
	var e *Error
	if errors.As(err, &e) {
		return e.Hints()
	}
	return nil
}

func TestCheckPathRefusesAFolderThatCannotBeWritten(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes anywhere")
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	if err := CheckPath(filepath.Join(dir, "x.json")); err == nil || !strings.Contains(err.Error(), "cannot write in") {
		t.Errorf("CheckPath = %v, want that it cannot write there", err)
	}
}

func TestWriteFileAtomicWritesTheWholeFileOrNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.json")
	if err := os.WriteFile(path, []byte("before"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := WriteFileAtomic(path, func(w io.Writer) error {
		io.WriteString(w, "half")
		return errors.New("disk full")
	}, nil)
	if b, _ := os.ReadFile(path); err == nil || string(b) != "before" {
		t.Errorf("a failed write: %v, the file holds %q; want the error and what it held before", err, b)
	}
	if err := WriteFileAtomic(path, func(w io.Writer) error { _, err := io.WriteString(w, "after"); return err }, nil); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "after" {
		t.Errorf("the file holds %q, want %q", b, "after")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*.tmp")); len(left) != 0 {
		t.Errorf("temporary files left behind: %q", left)
	}
}

func TestWriteFileAtomicGivesTheFileToItsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to give a file away")
	}
	path := filepath.Join(t.TempDir(), "s.json")
	if err := WriteFileAtomic(path, func(w io.Writer) error { return nil }, &syscall.Credential{Uid: 65534, Gid: 65534}); err != nil {
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
