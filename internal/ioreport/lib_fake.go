//go:build ioreportfake && !darwin

package ioreport

import (
	"fmt"
	"os"
)

// FakeLibraryEnv names the environment variable that gives, under the
// build tag ioreportfake on Linux, the path of a shared library that
// stands in for Core Foundation, libIOReport, IOKit and libSystem at
// once: the binding (lib.go) then runs its calls against it, and its
// tests hold them to what macOS's libraries expect. A released exopower
// is built without the tag and never reads it.
const FakeLibraryEnv = "EXOPOWER_IOREPORT_FAKE_LIBRARY"

// libraryPaths is the fake library, four times.
func libraryPaths() (libraries, error) {
	path := os.Getenv(FakeLibraryEnv)
	if path == "" {
		return libraries{}, fmt.Errorf("%s is not set: give it the path of the fake library (internal/ioreport/fakelib/fake.c, built with gcc -shared)", FakeLibraryEnv)
	}
	return libraries{coreFoundation: path, ioReport: path, ioKit: path, system: path}, nil
}

// machine names the fake's machine.
func machine() (string, string) { return "ioreportfake", "" }
