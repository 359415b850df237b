package cli

import (
	"errors"
	"io"
	"os"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// waitReader reads a descriptor that may have nothing to read for as
// long as its writer likes: stdin, a pipe, a FIFO, a terminal. Each read
// first waits in select(2), on the descriptor and on a pipe of the
// reader's own that Close writes to, and reads only once select says
// that the descriptor has data or its end: so Close ends a read that
// waits, and the descriptor's flags are never touched. Stdin's belong to
// the open file description that it shares with the shell and the
// programs after it: left O_NONBLOCK, the next program to read the pipe
// fails with EAGAIN. Go's poller would wait as well, but it takes only a
// descriptor marked O_NONBLOCK, and on macOS it misses the end of a FIFO
// (the last writer's close posts no kqueue event, golang/go#24164) while
// poll(2) there takes no terminal; select(2) sees both, on macOS as on
// Linux.
type waitReader struct {
	fd   int    // owned: closed with the reader
	wake [2]int // a pipe: Close writes to wake[1], which ends a wait

	mu      sync.Mutex
	reading bool // a Read is under way: it releases the descriptors
	closed  bool
}

// fdSetSize is the first descriptor that select(2) cannot wait on.
const fdSetSize = 8 * int(unsafe.Sizeof(unix.FdSet{}))

// newWaitReader reads fd, which it owns from now on: fd is closed when
// it fails.
func newWaitReader(fd int) (*waitReader, error) {
	var p [2]int
	// As os.Pipe does where there is no pipe2: no process started in
	// between inherits the pipe.
	syscall.ForkLock.RLock()
	err := unix.Pipe(p[:])
	if err == nil {
		unix.CloseOnExec(p[0])
		unix.CloseOnExec(p[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		unix.Close(fd)
		return nil, os.NewSyscallError("pipe", err)
	}
	r := &waitReader{fd: fd, wake: p}
	if max(fd, p[0]) >= fdSetSize {
		r.release()
		return nil, errors.New("too many files open: select(2) waits on descriptors below 1024")
	}
	return r, nil
}

// Read waits until the descriptor has data or its end, then reads it. It
// fails with os.ErrClosed once Close was called, a read that waits
// included; what a read took as Close came is still returned. One read
// at a time.
func (r *waitReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return 0, os.ErrClosed
	}
	r.reading = true
	r.mu.Unlock()
	n, err := r.read(p)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reading = false
	if r.closed {
		r.release()
		if n == 0 {
			err = os.ErrClosed
		}
	}
	return n, err
}

func (r *waitReader) read(p []byte) (int, error) {
	for {
		ready, err := r.wait()
		if !ready {
			return 0, err
		}
		n, err := unix.Read(r.fd, p)
		switch {
		case errors.Is(err, unix.EINTR), errors.Is(err, unix.EAGAIN):
			// EAGAIN: a program sharing the pipe took what select saw, or
			// a FIFO opened without waiting has no writer yet.
			continue
		case err != nil:
			return 0, os.NewSyscallError("read", err)
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// wait waits until the descriptor can be read without blocking (ready),
// or until Close (not ready, no error).
func (r *waitReader) wait() (ready bool, err error) {
	for {
		var set unix.FdSet
		set.Set(r.fd)
		set.Set(r.wake[0])
		_, err := unix.Select(max(r.fd, r.wake[0])+1, &set, nil, nil, nil)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return false, os.NewSyscallError("select", err)
		case set.IsSet(r.wake[0]):
			return false, nil
		}
		return true, nil
	}
}

// Close ends a read that waits, and every read after it. It never
// blocks: a read under way releases the descriptors as it returns.
func (r *waitReader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	unix.Write(r.wake[1], []byte{0})
	if !r.reading {
		r.release()
	}
	return nil
}

func (r *waitReader) release() {
	unix.Close(r.fd)
	unix.Close(r.wake[0])
	unix.Close(r.wake[1])
}

// newStdinReader reads stdin, descriptor fd, through a duplicate: closing
// the reader leaves stdin itself open, for the programs after exopower.
func newStdinReader(fd int) (*waitReader, error) {
	dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("dup", err)
	}
	return newWaitReader(dup)
}
