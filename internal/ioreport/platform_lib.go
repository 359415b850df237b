//go:build darwin || ioreportfake

package ioreport

import (
	"errors"
	"fmt"
)

// PlatformSerial reads the Mac's serial number, IOPlatformExpertDevice's
// IOPlatformSerialNumber in the IORegistry, without root. exopower keeps
// only a digest of it, to tell this Mac's calibration from another's:
// the caller must never store or print it.
func PlatformSerial() (string, error) {
	if loadErr != nil {
		return "", fmt.Errorf("IOKit: %w", loadErr)
	}
	matching := ioServiceMatching("IOPlatformExpertDevice")
	if matching == 0 {
		return "", errors.New("IOKit made no matching dictionary for IOPlatformExpertDevice")
	}
	entry := ioServiceGetMatchingService(0, matching) // it takes matching
	if entry == 0 {
		return "", errors.New("the IORegistry has no IOPlatformExpertDevice")
	}
	defer ioObjectRelease(entry)
	key := cfString("IOPlatformSerialNumber")
	if key == 0 {
		return "", errors.New("could not make the CFString IOPlatformSerialNumber")
	}
	defer cfRelease(key)
	v := ioRegistryEntryCreateCFProperty(entry, key, 0, 0) // a Create: ours to release
	if v == 0 {
		return "", errors.New("IOPlatformExpertDevice has no IOPlatformSerialNumber")
	}
	defer cfRelease(v)
	if cfGetTypeID(v) != cfStringGetTypeID() {
		return "", errors.New("IOPlatformExpertDevice's IOPlatformSerialNumber is not a string")
	}
	s := goString(v)
	if s == "" {
		return "", errors.New("IOPlatformExpertDevice's IOPlatformSerialNumber is empty")
	}
	return s, nil
}
