//go:build !darwin && !ioreportfake

package ioreport

import (
	"errors"
	"runtime"
)

// Open fails: IOReport and the SMC are macOS's.
func Open() (Library, error) {
	return nil, errors.New("IOReport is macOS's, and this is " + runtime.GOOS)
}
