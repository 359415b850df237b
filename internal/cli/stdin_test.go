package cli

import (
	"errors"
	"io"
	"os"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// blockingPipe is a pipe as a shell makes it: both ends blocking, unlike
// those of os.Pipe. Both ends are closed when the test ends.
func blockingPipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	var fds [2]int
	if err := syscall.Pipe(fds[:]); err != nil {
		t.Fatal(err)
	}
	syscall.CloseOnExec(fds[0])
	syscall.CloseOnExec(fds[1])
	// os.NewFile leaves a blocking descriptor as it is.
	r, w = os.NewFile(uintptr(fds[0]), "pipe"), os.NewFile(uintptr(fds[1]), "pipe")
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

func fileFlags(t *testing.T, f *os.File) int {
	t.Helper()
	fl, err := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0)
	if err != nil {
		t.Fatal(err)
	}
	return fl
}

// stdinReader leaves stdin's flags as it found them, whatever they were,
// reads it to its end, and Close ends a read that waits for data.
func TestStdinReaderLeavesTheFlagsAsItFoundThem(t *testing.T) {
	for _, nonblock := range []bool{false, true} {
		r, w := blockingPipe(t)
		if nonblock {
			if err := unix.SetNonblock(int(r.Fd()), true); err != nil {
				t.Fatal(err)
			}
		}
		before := fileFlags(t, r)
		sr, err := newStdinReader(int(r.Fd()))
		if err != nil {
			t.Fatal(err)
		}
		if after := fileFlags(t, r); after != before {
			t.Errorf("O_NONBLOCK %v: flags %#o before, %#o after", nonblock, before, after)
		}
		w.Write([]byte("one document"))
		w.Close()
		if b, err := io.ReadAll(sr); string(b) != "one document" || err != nil {
			t.Errorf("O_NONBLOCK %v: read %q, %v", nonblock, b, err)
		}
		sr.Close()
	}
}

// Close ends a read that waits for data (or, should it come first, the
// read after it) and leaves stdin itself open.
func TestStdinReaderCloseEndsAWaitingRead(t *testing.T) {
	r, _ := blockingPipe(t) // the write end stays open, and silent
	sr, err := newStdinReader(int(r.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	read := make(chan error, 1)
	go func() {
		_, err := sr.Read(make([]byte, 64))
		read <- err
	}()
	sr.Close()
	select {
	case err := <-read:
		if !errors.Is(err, os.ErrClosed) {
			t.Errorf("Read = %v, want os.ErrClosed", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Read still waits a minute after Close")
	}
	if _, err := unix.FcntlInt(r.Fd(), unix.F_GETFL, 0); err != nil {
		t.Errorf("stdin itself was closed: %v", err)
	}
}
