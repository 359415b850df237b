//go:build ioreportfake && linux

package ioreport_test

import (
	"strings"
	"testing"

	"github.com/exopower/exopower/internal/ioreport"
)

// The read of the Mac's serial number, against the same fake
// (fakelib/platform.c), each case in a process of its own.
func init() {
	for name, s := range map[string]scenario{
		"the Mac's serial number":                           {"mac", readsSerial},
		"no IOPlatformSerialNumber":                         {"platform-no-serial", serialFails("has no IOPlatformSerialNumber")},
		"a serial number that is not a string":              {"platform-number", serialFails("is not a string")},
		"no matching dictionary for IOPlatformExpertDevice": {"no-matching", serialFails("no matching dictionary")},
	} {
		scenarios[name] = s
	}
}

// readsSerial: the fake's serial, twice, and nothing left alive.
func readsSerial(t *testing.T, f *fakeLib) {
	for range 2 {
		s, err := ioreport.PlatformSerial()
		if err != nil || s != "C02FAKE0SRL1" {
			t.Fatalf("got %q, %v: want the fake's serial C02FAKE0SRL1", s, err)
		}
	}
	f.nothingLeft(t, "after two reads of the serial")
}

func serialFails(want string) func(*testing.T, *fakeLib) {
	return func(t *testing.T, f *fakeLib) {
		s, err := ioreport.PlatformSerial()
		if err == nil || !strings.Contains(err.Error(), want) || s != "" {
			t.Fatalf("got %q, %v: want an error that says %q", s, err, want)
		}
		f.nothingLeft(t, "after a failed read of the serial")
	}
}
