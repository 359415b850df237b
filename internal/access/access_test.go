package access

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestCheckReadsTheBitsForTheUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give files to other users")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, nil, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, 1000, 50); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o642); err != nil {
		t.Fatal(err)
	}
	owner := &syscall.Credential{Uid: 1000, Gid: 1000}
	member := &syscall.Credential{Uid: 2000, Gid: 2000, Groups: []uint32{50}}
	primary := &syscall.Credential{Uid: 2000, Gid: 50}
	other := &syscall.Credential{Uid: 3000, Gid: 3000}
	for _, tt := range []struct {
		name string
		cred *syscall.Credential
		want uint32
		ok   bool
	}{
		{"the owner may read and write", owner, Read | Write, true},
		{"but not execute", owner, Execute, false},
		{"a member of the group may read", member, Read, true},
		{"but not write", member, Write, false},
		{"the primary group counts as the groups do", primary, Read, true},
		{"another user may write (0642)", other, Write, true},
		{"but not read: the others' bits, not the group's", other, Read, false},
		{"root is a user like the others here", &syscall.Credential{}, Read, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := Check(path, tt.cred, tt.want)
			if tt.ok != (err == nil) || (err != nil && !errors.Is(err, fs.ErrPermission)) {
				t.Errorf("Check = %v, want ok=%v", err, tt.ok)
			}
		})
	}
	if err := Check(filepath.Join(dir, "missing"), owner, Read); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v, want ErrNotExist", err)
	}
}
