//go:build !darwin && !attribfake

package attrib

import (
	"errors"
	"runtime"
)

// Open fails: the kernel keeps each process's energy on macOS only.
func Open() (Kernel, error) {
	return nil, errors.New("process energy is macOS's (13 or later, on Apple Silicon), and this is " + runtime.GOOS)
}
