// Package keys reads the keys pressed on the terminal for exopower's
// live views (top's sorting, filtering and pausing, and the switch
// between top's apps and watch's rails).
//
// The terminal is put in cbreak mode, not raw mode: keys come one at a
// time and are not echoed, but Ctrl-C still raises SIGINT, which
// exopower's signal owner already turns into a clean end with a summary,
// and output is still post-processed, so that the panels' newlines
// still return the cursor. Close gives the terminal back its settings.
package keys

import (
	"errors"
	"os"
	"sync"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// Key is one key pressed: a character, or one of the named keys.
type Key struct {
	Rune rune
	Name Name
}

// Name names a key that is not a character.
type Name int

// The named keys.
const (
	None Name = iota
	Up
	Down
	Left
	Right
	PageUp
	PageDown
	Home
	End
	Enter
	Escape
	Backspace
	Tab
)

// Reader reads a terminal's keys until it is closed.
type Reader struct {
	f     *os.File
	saved *unix.Termios
	keys  chan Key
	done  chan struct{} // closed when the read has ended
	once  sync.Once
	err   error
}

// ErrNoTerminal says there is no terminal to read keys from.
var ErrNoTerminal = errors.New("no terminal to read keys from")

// Open reads the keys of the process's controlling terminal (/dev/tty,
// so that keys are read with stdin redirected too). It fails where
// there is none, as under a service manager or in a pipeline without
// one: the views then run without keys.
func Open() (*Reader, error) {
	f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return nil, errors.Join(ErrNoTerminal, err)
	}
	r, err := OpenFile(f)
	if err != nil {
		f.Close()
	}
	return r, err
}

// OpenFile reads the keys of the terminal f, which the Reader then owns.
func OpenFile(f *os.File) (*Reader, error) {
	var saved unix.Termios
	err := control(f, func(fd int) error {
		t, err := unix.IoctlGetTermios(fd, getTermios)
		if err != nil {
			return errors.Join(ErrNoTerminal, err)
		}
		saved = *t
		t.Lflag &^= unix.ICANON | unix.ECHO
		t.Cc[unix.VMIN], t.Cc[unix.VTIME] = 1, 0
		// Ctrl-Z and Ctrl-\ would stop or kill exopower on the
		// alternate screen, its cursor hidden and the terminal in this
		// mode, which no handler of theirs could give back: they are
		// off while the keys are read. Ctrl-C stays a signal, which
		// ends the view cleanly.
		t.Cc[unix.VSUSP], t.Cc[unix.VQUIT] = vdisable, vdisable
		return unix.IoctlSetTermios(fd, setTermios, t)
	})
	if err != nil {
		return nil, err
	}
	r := &Reader{f: f, saved: &saved, keys: make(chan Key, 16), done: make(chan struct{})}
	go r.read()
	return r, nil
}

// control runs fn on f's descriptor without taking f out of the
// runtime's poller (f.Fd would make it blocking), so that Close's
// deadline wakes the read that waits on it.
func control(f *os.File, fn func(fd int) error) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return err
	}
	return ferr
}

// C brings the keys pressed, in order. A key pressed while the view is
// busy waits; keys beyond 16 waiting are dropped.
func (r *Reader) C() <-chan Key { return r.keys }

// read reads the terminal until it is closed: Close's deadline wakes
// the read that waits, where the runtime can poll the terminal (Linux's
// epoll can; macOS's kqueue cannot take a terminal, and there the read
// ends at the next key or at exit, whichever comes first).
func (r *Reader) read() {
	defer close(r.done)
	buf := make([]byte, 64)
	for {
		n, err := r.f.Read(buf)
		for _, k := range Decode(buf[:n]) {
			select {
			case r.keys <- k:
			default:
			}
		}
		if err != nil {
			return
		}
	}
}

// Close gives the terminal back the settings it had, once.
func (r *Reader) Close() error {
	r.once.Do(func() {
		r.err = control(r.f, func(fd int) error { return unix.IoctlSetTermios(fd, setTermios, r.saved) })
		r.f.SetReadDeadline(aLongTimeAgo)
		if err := r.f.Close(); r.err == nil {
			r.err = err
		}
	})
	return r.err
}

// Decode reads the keys in b, as one read of the terminal gives them: an
// escape sequence arrives whole, so an escape alone is the Escape key.
// Sequences it does not know are dropped, not read as characters.
func Decode(b []byte) []Key {
	var out []Key
	for len(b) > 0 {
		k, n := decodeOne(b)
		if k != (Key{}) {
			out = append(out, k)
		}
		b = b[n:]
	}
	return out
}

func decodeOne(b []byte) (Key, int) {
	switch b[0] {
	case '\r', '\n':
		return Key{Name: Enter}, 1
	case '\t':
		return Key{Name: Tab}, 1
	case 0x7f, 0x08:
		return Key{Name: Backspace}, 1
	case 0x1b:
		return decodeEscape(b)
	}
	if b[0] < 0x20 {
		return Key{}, 1
	}
	r, n := utf8.DecodeRune(b)
	if r == utf8.RuneError {
		return Key{}, n
	}
	return Key{Rune: r}, n
}

// csi are the sequences of the keys the views take, after ESC [ or ESC O.
var csi = map[string]Name{"A": Up, "B": Down, "C": Right, "D": Left, "H": Home, "F": End,
	"5~": PageUp, "6~": PageDown, "1~": Home, "4~": End, "7~": Home, "8~": End}

func decodeEscape(b []byte) (Key, int) {
	if len(b) == 1 || (b[1] != '[' && b[1] != 'O') {
		return Key{Name: Escape}, 1
	}
	// A sequence runs to its final byte, 0x40 to 0x7e.
	for i := 2; i < len(b); i++ {
		if b[i] >= 0x40 && b[i] <= 0x7e {
			return Key{Name: csi[string(b[2:i+1])]}, i + 1
		}
	}
	return Key{}, len(b)
}
