//go:build !darwin && !ioreportfake

package ioreport

import (
	"errors"
	"fmt"
	"runtime"
)

// Open fails: IOReport and the SMC are macOS's.
func Open() (Library, error) {
	return nil, errors.New("IOReport is macOS's, and this is " + runtime.GOOS)
}

// OpenBattery fails: the IORegistry and the SMC are macOS's.
func OpenBattery() (BatteryReader, error) {
	return nil, fmt.Errorf("%w, and this is %s", ErrNotMacOS, runtime.GOOS)
}

// PlatformSerial fails: the serial number is read from macOS's
// IORegistry.
func PlatformSerial() (string, error) {
	return "", errors.New("the Mac's serial number is read from macOS's IORegistry, and this is " + runtime.GOOS)
}
