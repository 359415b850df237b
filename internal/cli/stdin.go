package cli

import (
	"errors"
	"io"
	"os"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// stdinReader reads exopower's stdin, which it shares with the shell and
// the programs after it, through Go's poller: a read waits without a
// thread of its own, and Close ends it. The poller takes only a
// descriptor marked O_NONBLOCK, but that flag belongs to the open file
// description that they all share: left set, the next program to read the
// pipe fails with EAGAIN. So it is set for the instant the poller takes a
// duplicate of stdin and cleared at once, before anything can fail or be
// interrupted; each read then waits until poll says that data is there,
// and so never blocks.
type stdinReader struct {
	f      *os.File // the duplicate, on the poller
	rc     syscall.RawConn
	closed atomic.Bool
}

func newStdinReader(fd int) (*stdinReader, error) {
	dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("dup", err)
	}
	flags, err := unix.FcntlInt(uintptr(dup), unix.F_GETFL, 0)
	if err != nil {
		unix.Close(dup)
		return nil, os.NewSyscallError("fcntl", err)
	}
	var f *os.File
	if flags&unix.O_NONBLOCK != 0 {
		f = os.NewFile(uintptr(dup), "stdin") // someone else's flag: kept
	} else {
		_, err = unix.FcntlInt(uintptr(dup), unix.F_SETFL, flags|unix.O_NONBLOCK)
		if err == nil {
			f = os.NewFile(uintptr(dup), "stdin")
			_, err = unix.FcntlInt(uintptr(dup), unix.F_SETFL, flags)
		}
		if err != nil {
			if f != nil {
				f.Close()
			} else {
				unix.Close(dup)
			}
			return nil, os.NewSyscallError("fcntl", err)
		}
	}
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &stdinReader{f: f, rc: rc}, nil
}

// Read reads what stdin has, waiting on the poller until it has some. It
// fails with os.ErrClosed once Close was called.
func (r *stdinReader) Read(p []byte) (n int, err error) {
	werr := r.rc.Read(func(fd uintptr) bool {
		n, err = readReady(int(fd), p)
		return !errors.Is(err, unix.EAGAIN)
	})
	switch {
	case werr != nil && r.closed.Load():
		return 0, os.ErrClosed
	case werr != nil:
		return 0, werr
	}
	return n, err
}

// readReady reads fd when poll says it has data (or its end), and fails
// with EAGAIN when it has none, so that the caller waits on the poller:
// fd is blocking, and a read of it would block the thread.
func readReady(fd int, p []byte) (int, error) {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		k, err := unix.Poll(fds, 0)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return 0, os.NewSyscallError("poll", err)
		case k == 0:
			return 0, unix.EAGAIN
		}
		n, err := unix.Read(fd, p)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EAGAIN):
			// A program sharing the pipe took what poll saw.
			return 0, unix.EAGAIN
		case err != nil:
			return 0, os.NewSyscallError("read", err)
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// Close ends a read in progress, and every read after it. Stdin itself
// stays open: only the duplicate is closed.
func (r *stdinReader) Close() error {
	r.closed.Store(true)
	return r.f.Close()
}
