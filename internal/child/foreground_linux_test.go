package child

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// ForegroundOnTerminal in a session of its own on a pseudo-terminal: true
// for the session's leader, which the terminal reads from, false for a
// process in another group of the session, as in a shell's background.
func TestForegroundOnTerminal(t *testing.T) {
	pts := openPTY(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ helper, want string }{
		{"foreground", "true"},
		{"background", "false"},
	} {
		t.Run(tt.helper, func(t *testing.T) {
			var out, stderr strings.Builder
			cmd := exec.Command(self)
			cmd.Env = []string{helperEnv + "=" + tt.helper}
			cmd.Stdin, cmd.Stdout, cmd.Stderr = pts, &out, &stderr
			// Ctty 0 is the helper's stdin: the pseudo-terminal.
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
			if err := cmd.Run(); err != nil {
				t.Fatalf("%v: %s", err, stderr.String())
			}
			if got := strings.TrimSpace(out.String()); got != tt.want {
				t.Errorf("ForegroundOnTerminal() = %s, want %s", got, tt.want)
			}
		})
	}
}

// openPTY opens a pseudo-terminal and returns its terminal end.
func openPTY(t *testing.T) *os.File {
	t.Helper()
	ptm, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skip("no pseudo-terminals:", err)
	}
	t.Cleanup(func() { ptm.Close() })
	if err := unix.IoctlSetPointerInt(int(ptm.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetUint32(int(ptm.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	pts, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pts.Close() })
	return pts
}
