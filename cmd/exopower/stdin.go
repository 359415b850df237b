package main

import (
	"errors"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// stdinReader reads a descriptor that exopower shares with others, its
// stdin, and leaves it as it found it. O_NONBLOCK would let a close end a
// read in progress, but it belongs to the open file description, which
// the shell and the next program to read the pipe share: they would fail
// with EAGAIN. Instead a read waits in poll(2) on the descriptor and on a
// pipe of the reader's own, and Close closes that pipe to end the wait.
type stdinReader struct {
	fd   int
	wake *os.File // the read end of the reader's pipe: it wakes a read
	stop *os.File // the write end, closed by Close
}

func newStdinReader(fd int) (*stdinReader, error) {
	wake, stop, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	return &stdinReader{fd: fd, wake: wake, stop: stop}, nil
}

// Read reads stdin once poll says it can, and fails with os.ErrClosed
// once Close was called.
func (r *stdinReader) Read(p []byte) (n int, err error) {
	rc, err := r.wake.SyscallConn()
	if err != nil {
		return 0, err
	}
	// Control keeps the wake descriptor open while the poll waits on it:
	// Close waits for the poll to return before it closes it.
	if cerr := rc.Control(func(wake uintptr) { n, err = r.read(int(wake), p) }); cerr != nil {
		return 0, os.ErrClosed
	}
	return n, err
}

func (r *stdinReader) read(wake int, p []byte) (int, error) {
	fds := []unix.PollFd{{Fd: int32(r.fd), Events: unix.POLLIN}, {Fd: int32(wake), Events: unix.POLLIN}}
	for {
		if _, err := unix.Poll(fds, -1); err != nil {
			if err == unix.EINTR {
				continue
			}
			return 0, os.NewSyscallError("poll", err)
		}
		if fds[1].Revents != 0 {
			return 0, os.ErrClosed
		}
		if fds[0].Revents == 0 {
			continue
		}
		n, err := unix.Read(r.fd, p)
		switch {
		case errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN):
			// Someone else's O_NONBLOCK, or a program sharing the pipe
			// took what poll saw: wait again.
			continue
		case err != nil:
			return 0, os.NewSyscallError("read", err)
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// Close ends a read in progress, and every read after it. It leaves
// stdin open: it is not the reader's.
func (r *stdinReader) Close() error {
	r.stop.Close()
	return r.wake.Close()
}
