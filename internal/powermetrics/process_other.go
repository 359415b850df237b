//go:build !linux

package powermetrics

import "syscall"

// sysProcAttr puts powermetrics in its own process group. macOS has no
// parent-death signal: an orphaned powermetrics dies of SIGPIPE at its next
// write, since only exopower holds the read end of its pipe.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
