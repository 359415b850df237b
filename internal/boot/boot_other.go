//go:build !linux && !darwin

package boot

// sessionID is not known here.
func sessionID() string { return "" }
