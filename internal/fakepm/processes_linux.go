package fakepm

import "golang.org/x/sys/unix"

// waitExited waits for a child to exit and leaves it a zombie, as
// exopower's binding does on macOS: Linux has waitid's WNOWAIT too.
func waitExited(pid int32) error {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, int(pid), &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return err
		}
	}
}
