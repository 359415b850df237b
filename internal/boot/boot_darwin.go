package boot

import "golang.org/x/sys/unix"

// sessionID is the kernel's kern.bootsessionuuid, a UUID drawn at every
// boot, which every user may read.
func sessionID() string {
	id, err := unix.Sysctl("kern.bootsessionuuid")
	if err != nil {
		return ""
	}
	return id
}
