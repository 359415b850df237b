//go:build attribfake && !darwin

package attrib

import (
	"fmt"
	"os"
	"runtime"
	"unsafe"

	"github.com/ebitengine/purego"
)

// FakeLibraryEnv names the environment variable that gives, under the
// build tag attribfake on Linux, the path of a shared library that stands
// in for libSystem, Core Foundation and IOKit at once: the binding
// (lib.go) then runs its calls against it, and its tests hold them to
// what macOS expects. A released exopower is built without the tag and
// never reads it.
const FakeLibraryEnv = "EXOPOWER_ATTRIB_FAKE_LIBRARY"

// bindingPaths is the fake library, three times.
func bindingPaths() (bindingLibraries, error) {
	path := os.Getenv(FakeLibraryEnv)
	if path == "" {
		return bindingLibraries{}, fmt.Errorf("%s is not set: give it the path of the fake library (internal/attrib/fakelib/fake.c, built with gcc -shared)", FakeLibraryEnv)
	}
	return bindingLibraries{system: path, coreFoundation: path, ioKit: path}, nil
}

// The fake's errno, and its sysctl.
var fakeErrnoWord, fakeSysctl uintptr

func loadPlatform(sys uintptr) error {
	var err error
	if fakeErrnoWord, err = purego.Dlsym(sys, "fake_errno_word"); err != nil {
		return err
	}
	fakeSysctl, err = purego.Dlsym(sys, "sysctlbyname")
	return err
}

// call calls a C function of the fake with args, and gives its return
// and errno, which purego does not read on Linux: the fake gives it from
// another call, on the same thread, as purego's load of it gives it on
// macOS (fake_errno_word). An address in args must be of memory that Go
// keeps alive, and does not move, until call returns (see binding.sys).
func call(fn uintptr, args []uintptr) (r, errno uintptr) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r, _, _ = purego.SyscallN(fn, args...)
	errno, _, _ = purego.SyscallN(fakeErrnoWord)
	return r, errno
}

// callEscaping is call for addresses of any memory, each passed as
// uintptr(unsafe.Pointer(p)) in the call itself, which moves the memory
// to the heap and keeps it alive until it returns; its arguments are
// allocated.
//
//go:uintptrescapes
func callEscaping(fn uintptr, args ...uintptr) (r, errno uintptr) {
	return call(fn, args)
}

// sysctlString and sysctlUint32 read the fake's sysctlbyname, as x/sys
// reads macOS's: the size, then the value.
func sysctlString(name string) (string, error) {
	b, err := sysctl(name)
	if err != nil {
		return "", err
	}
	return cString(b), nil
}

func sysctlUint32(name string) (uint32, error) {
	b, err := sysctl(name)
	if err != nil {
		return 0, err
	}
	if len(b) != 4 {
		return 0, fmt.Errorf("sysctl %s: %d bytes, not 4", name, len(b))
	}
	return *(*uint32)(unsafe.Pointer(&b[0])), nil
}

func sysctl(name string) ([]byte, error) {
	cname := append([]byte(name), 0)
	var size uintptr
	if r, e := callEscaping(fakeSysctl, uintptr(unsafe.Pointer(&cname[0])), 0, uintptr(unsafe.Pointer(&size)), 0, 0); int32(r) != 0 {
		return nil, fmt.Errorf("sysctl %s: %w", name, errnoOf(e))
	}
	buf := make([]byte, size)
	if size == 0 {
		return buf, nil
	}
	if r, e := callEscaping(fakeSysctl, uintptr(unsafe.Pointer(&cname[0])), uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&size)), 0, 0); int32(r) != 0 {
		return nil, fmt.Errorf("sysctl %s: %w", name, errnoOf(e))
	}
	return buf[:size], nil
}
