package keys

import (
	"errors"
	"os"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/exopower/exopower/internal/testfiles"
)

// On a terminal, keys come one at a time, unechoed, with Ctrl-C still a
// signal; Close gives the terminal its settings back exactly.
func TestAReaderTakesKeysAndGivesTheTerminalBack(t *testing.T) {
	c, term := testfiles.OpenPTY(t)
	// term.Fd would make term blocking, and Close's deadline could not
	// end the read: the settings are read through control, as OpenFile
	// reads them.
	var before *unix.Termios
	if err := control(term, func(fd int) (err error) { before, err = unix.IoctlGetTermios(fd, getTermios); return err }); err != nil {
		t.Fatal(err)
	}
	// The Reader owns and closes term: a second descriptor of the same
	// terminal reads its settings after.
	other, err := os.OpenFile(term.Name(), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	r, err := OpenFile(term)
	if err != nil {
		t.Fatal(err)
	}
	during, err := unix.IoctlGetTermios(int(other.Fd()), getTermios)
	if err != nil {
		t.Fatal(err)
	}
	if during.Lflag&(unix.ICANON|unix.ECHO) != 0 || during.Lflag&unix.ISIG == 0 || during.Oflag != before.Oflag {
		t.Errorf("lflag %#x oflag %#x: want canonical input and echo off, signals and output as they were (oflag %#x)",
			during.Lflag, during.Oflag, before.Oflag)
	}
	if during.Cc[unix.VSUSP] != vdisable || during.Cc[unix.VQUIT] != vdisable || during.Cc[unix.VINTR] != before.Cc[unix.VINTR] {
		t.Errorf("suspend %#x, quit %#x, interrupt %#x: want the first two off, Ctrl-C as it was (%#x)",
			during.Cc[unix.VSUSP], during.Cc[unix.VQUIT], during.Cc[unix.VINTR], before.Cc[unix.VINTR])
	}
	if _, err := c.Write([]byte("s\x1b[B")); err != nil {
		t.Fatal(err)
	}
	for _, want := range []Key{{Rune: 's'}, {Name: Down}} {
		if got := <-r.C(); got != want {
			t.Errorf("key %v, want %v", got, want)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
	// The read that waited has ended: a line typed after is the
	// terminal's next reader's, not taken by a reader closed. (A read
	// that never ends fails the test at go test's timeout.)
	<-r.done
	after, err := unix.IoctlGetTermios(int(other.Fd()), getTermios)
	if err != nil {
		t.Fatal(err)
	}
	if *after != *before {
		t.Errorf("settings after Close %+v, want those before %+v", *after, *before)
	}
}

// A file that is not a terminal is refused, saying so.
func TestAReaderNeedsATerminal(t *testing.T) {
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := OpenFile(f); !errors.Is(err, ErrNoTerminal) {
		t.Errorf("a reader over /dev/null: %v, want %v", err, ErrNoTerminal)
	}
}
