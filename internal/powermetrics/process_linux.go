package powermetrics

import "syscall"

// sysProcAttr puts powermetrics in its own process group and has the kernel
// end it when exopower dies, even by SIGKILL.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
