//go:build darwin

package attrib

import (
	"github.com/ebitengine/purego"
	"golang.org/x/sys/unix"
)

// bindingPaths are macOS's libraries, which the binding (lib.go) calls.
func bindingPaths() (bindingLibraries, error) {
	return bindingLibraries{
		system:         "/usr/lib/libSystem.B.dylib",
		coreFoundation: "/System/Library/Frameworks/CoreFoundation.framework/CoreFoundation",
		ioKit:          "/System/Library/Frameworks/IOKit.framework/IOKit",
	}, nil
}

// loadPlatform has nothing more to load on macOS.
func loadPlatform(uintptr) error { return nil }

// call calls a C function of libSystem with args, and gives its return
// and errno, which purego reads in the same call, on the same thread,
// from __error(). An address in args must be of memory that Go keeps
// alive, and does not move, until call returns (see binding.sys).
func call(fn uintptr, args []uintptr) (r, errno uintptr) {
	r, _, errno = purego.SyscallN(fn, args...)
	return r, errno
}

// callEscaping is call for addresses of any memory, each passed as
// uintptr(unsafe.Pointer(p)) in the call itself, which moves the memory
// to the heap and keeps it alive until it returns; its arguments are
// allocated.
//
//go:uintptrescapes
func callEscaping(fn uintptr, args ...uintptr) (r, errno uintptr) {
	r, _, errno = purego.SyscallN(fn, args...)
	return r, errno
}

// sysctlString and sysctlUint32 read sysctl through x/sys.
func sysctlString(name string) (string, error) { return unix.Sysctl(name) }
func sysctlUint32(name string) (uint32, error) { return unix.SysctlUint32(name) }
