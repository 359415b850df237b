//go:build !linux

package fakepm

import (
	"errors"
	"runtime"
)

// waitExited is Linux's: the fake's real root is for tests on Linux.
func waitExited(pid int32) error {
	return errors.New("the fake process table waits for a real child on Linux only, not " + runtime.GOOS)
}
