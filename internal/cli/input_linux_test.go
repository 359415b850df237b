package cli

import (
	"errors"
	"fmt"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// terminal opens a new pseudo-terminal and returns the descriptor of its
// terminal side, as a shell gives it to a program's stdin, and the
// master's, which the test keeps open and silent.
func terminal(t *testing.T) (tty, master int) {
	t.Helper()
	master, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { unix.Close(master) })
	if err := unix.IoctlSetPointerInt(master, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(master, unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	tty, err = unix.Open(fmt.Sprintf("/dev/pts/%d", n), unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(tty) })
	return tty, master
}

// A terminal on stdin that nobody types on: Close ends the read that
// waits, and the terminal stays open.
func TestStdinReaderCloseEndsAWaitOnATerminal(t *testing.T) {
	tty, _ := terminal(t)
	sr, err := newStdinReader(tty)
	if err != nil {
		t.Fatal(err)
	}
	read := make(chan error, 1)
	go func() {
		_, err := sr.Read(make([]byte, 64))
		read <- err
	}()
	sr.Close()
	within(t, "a read of a silent terminal after Close", func() {
		if err := <-read; !errors.Is(err, os.ErrClosed) {
			t.Errorf("Read = %v, want os.ErrClosed", err)
		}
	})
	if _, err := unix.FcntlInt(uintptr(tty), unix.F_GETFL, 0); err != nil {
		t.Errorf("the terminal itself was closed: %v", err)
	}
}
