package cli

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// InputName is how messages name an input given as name: stdin for "-".
func InputName(name string) string {
	if name == "-" {
		return "stdin"
	}
	return name
}

// Open opens the input FILE, or stdin for "-", to be read to its end.
// Closing stdin's reader leaves stdin open.
func (s *Streams) Open(name string) (io.ReadCloser, error) {
	if name == "-" {
		return io.NopCloser(s.In), nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, Fail(err)
	}
	return f, nil
}

// OpenLive opens FILE, or stdin for "-", to be followed as it grows, and
// says whether it is a regular file. Stdin is read through the poller,
// so that closing its reader ends a read that waits, and its flags,
// which it shares with the shell, are left as they are (see
// stdinReader).
func (s *Streams) OpenLive(name string) (in io.ReadCloser, regular bool, err error) {
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, false, Fail(err)
		}
		fi, err := f.Stat()
		return f, err == nil && fi.Mode().IsRegular(), nil
	}
	var st unix.Stat_t
	if err := unix.Fstat(s.InFd, &st); err != nil {
		return nil, false, Fail(fmt.Errorf("stdin: %w", os.NewSyscallError("fstat", err)))
	}
	r, err := newStdinReader(s.InFd)
	if err != nil {
		return nil, false, Fail(fmt.Errorf("stdin: %w", err))
	}
	return r, st.Mode&unix.S_IFMT == unix.S_IFREG, nil
}
