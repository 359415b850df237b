//go:build darwin || freebsd || netbsd || openbsd

package keys

import "golang.org/x/sys/unix"

const (
	getTermios = unix.TIOCGETA
	setTermios = unix.TIOCSETA
)

// vdisable is _POSIX_VDISABLE: a control character set to it is off.
const vdisable = 0xff
