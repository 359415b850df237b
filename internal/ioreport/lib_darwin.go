//go:build darwin

package ioreport

import "golang.org/x/sys/unix"

// libraryPaths are macOS's frameworks and libraries, which the binding
// (lib.go) calls.
func libraryPaths() (libraries, error) {
	return libraries{
		coreFoundation: "/System/Library/Frameworks/CoreFoundation.framework/CoreFoundation",
		ioReport:       "/usr/lib/libIOReport.dylib",
		ioKit:          "/System/Library/Frameworks/IOKit.framework/IOKit",
		system:         "/usr/lib/libSystem.B.dylib",
	}, nil
}

// machine names the Mac from sysctl: its model (Mac14,14) and macOS
// build (24F74).
func machine() (string, string) {
	hw, _ := unix.Sysctl("hw.model")
	build, _ := unix.Sysctl("kern.osversion")
	return hw, build
}
