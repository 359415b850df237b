package source

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// uptime is how long this process has run, from its start as the kernel
// keeps it (kern.proc.pid, p_starttime), on the wall clock.
func uptime() (time.Duration, bool) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", os.Getpid())
	if err != nil {
		return 0, false
	}
	start := kp.Proc.P_starttime
	return time.Since(time.Unix(start.Sec, int64(start.Usec)*1000)), true
}
