package cli

import (
	"fmt"
	"io"
	"io/fs"
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
// Nothing it returns blocks past Close: a FIFO is opened without waiting
// for its writer, and stdin, a FIFO or a device (a terminal) is read
// through a reader whose Close ends a read that waits (see waitReader).
// Closing stdin's reader leaves stdin open.
func (s *Streams) Open(name string) (io.ReadCloser, error) {
	if name == "-" {
		if _, ok := s.In.(*os.File); !ok {
			return io.NopCloser(s.In), nil // a test's reader, which never waits
		}
		r, err := newStdinReader(s.InFd)
		if err != nil {
			return nil, Fail(fmt.Errorf("stdin: %w", err))
		}
		return r, nil
	}
	in, _, err := openInput(name)
	if err != nil {
		return nil, Fail(err)
	}
	return in, nil
}

// OpenLive opens FILE, or stdin for "-", to be followed as it grows, and
// says whether it is a regular file. As for Open, nothing it returns
// blocks past Close, and stdin's flags, which it shares with the shell,
// are left as they are.
func (s *Streams) OpenLive(name string) (in io.ReadCloser, regular bool, err error) {
	if name != "-" {
		in, regular, err := openInput(name)
		if err != nil {
			return nil, false, Fail(err)
		}
		return in, regular, nil
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

// openInput opens name to read, without waiting: O_NONBLOCK, so that a
// FIFO with no writer yet opens at once (a plain open waits for one, out
// of reach of any signal). A regular file or a directory is read as
// usual; anything else (a FIFO, a terminal, a device) through a
// waitReader, which waits for a FIFO's writer and data in select(2).
func openInput(name string) (in io.ReadCloser, regular bool, err error) {
	fd, err := unix.Open(name, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	for err == unix.EINTR {
		fd, err = unix.Open(name, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return nil, false, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, false, &fs.PathError{Op: "fstat", Path: name, Err: err}
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG, unix.S_IFDIR:
		// Reads of a file never wait on a writer: blocking, as os.Open
		// leaves it.
		if err := unix.SetNonblock(fd, false); err != nil {
			unix.Close(fd)
			return nil, false, &fs.PathError{Op: "fcntl", Path: name, Err: err}
		}
		return os.NewFile(uintptr(fd), name), st.Mode&unix.S_IFMT == unix.S_IFREG, nil
	}
	r, err := newWaitReader(fd)
	if err != nil {
		return nil, false, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return r, false, nil
}
