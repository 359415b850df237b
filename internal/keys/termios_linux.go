package keys

import "golang.org/x/sys/unix"

const (
	getTermios = unix.TCGETS
	setTermios = unix.TCSETS
)

// vdisable is _POSIX_VDISABLE: a control character set to it is off.
const vdisable = 0
