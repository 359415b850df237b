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
	fd := int(f.Fd())
	t, err := unix.IoctlGetTermios(fd, getTermios)
	if err != nil {
		return nil, errors.Join(ErrNoTerminal, err)
	}
	saved := *t
	t.Lflag &^= unix.ICANON | unix.ECHO
	t.Cc[unix.VMIN], t.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(fd, setTermios, t); err != nil {
		return nil, err
	}
	r := &Reader{f: f, saved: &saved, keys: make(chan Key, 16)}
	go r.read()
	return r, nil
}

// C brings the keys pressed, in order. A key pressed while the view is
// busy waits; keys beyond 16 waiting are dropped.
func (r *Reader) C() <-chan Key { return r.keys }

// read reads the terminal until it is closed. The read is not cut short
// by Close where the terminal cannot be polled (macOS's kqueue does not
// take terminals): it ends at the next key or at exit, whichever comes
// first, having restored nothing itself.
func (r *Reader) read() {
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
		r.err = unix.IoctlSetTermios(int(r.f.Fd()), setTermios, r.saved)
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
