// Package access answers whether a user may do something to a file, by
// the permission bits, as the kernel would answer that user. exopower
// runs as root under sudo; access(2) would answer for root, who may do
// nearly anything, while what exopower does for the user (run a command,
// write a summary) must be what the user may do.
package access

import (
	"io/fs"
	"slices"
	"syscall"
)

// What a user may want of a file, as in a mode's permission bits.
const (
	Execute uint32 = 1 // or search, for a directory
	Write   uint32 = 2
	Read    uint32 = 4
)

// Check returns nil when cred may do want (a sum of Execute, Write,
// Read) to path, by the owner's bits for the owner, the group's for a
// member of the group and the others' for the rest; otherwise an
// *fs.PathError wrapping fs.ErrPermission, or the error of stat. Links
// are followed. ACLs and read-only mounts are not looked at: the
// operation itself still fails then.
func Check(path string, cred *syscall.Credential, want uint32) error {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if !permits(st.Uid, st.Gid, uint32(st.Mode), cred, want) {
		return &fs.PathError{Op: "access", Path: path, Err: fs.ErrPermission}
	}
	return nil
}

// permits says whether cred may do want to a file of owner uid, group
// gid and mode: by the owner's bits for the owner, the group's for a
// member of the group and the others' for the rest.
func permits(uid, gid, mode uint32, cred *syscall.Credential, want uint32) bool {
	shift := 0
	switch {
	case uid == cred.Uid:
		shift = 6
	case gid == cred.Gid || slices.Contains(cred.Groups, gid):
		shift = 3
	}
	return (mode>>shift)&want == want
}
