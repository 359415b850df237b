//go:build !linux && !darwin

package serve

// closedByPeer cannot tell here: a client's going is known from the
// request's context alone.
func closedByPeer(uintptr) bool { return false }
