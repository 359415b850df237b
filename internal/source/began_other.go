//go:build !linux && !darwin

package source

import "time"

// uptime is not known here.
func uptime() (time.Duration, bool) { return 0, false }
