package boot

import "os"

// sessionID is the kernel's boot_id, a UUID drawn at every boot, which
// every user may read.
func sessionID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return string(b)
}
