package fakepm

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// The fake writes its process id to FAKEPM_PIDFILE when it starts, so
// that a test can tell whether exopower left it behind. These read it.

// writePid writes this process's id to pidfile whole or not at all (a
// file written in place is empty for a moment, and a test that sees it
// then reads no pid), except into a FIFO, which a test reads as the fake
// writes.
func writePid(pidfile string) {
	b := []byte(strconv.Itoa(os.Getpid()) + "\n")
	if st, err := os.Stat(pidfile); err == nil && st.Mode()&os.ModeNamedPipe != 0 {
		os.WriteFile(pidfile, b, 0o644)
		return
	}
	tmp := pidfile + ".tmp"
	if os.WriteFile(tmp, b, 0o644) == nil {
		os.Rename(tmp, pidfile)
	}
}

// ReadPid reads the process id that the fake wrote to pidfile.
func ReadPid(pidfile string) (int, error) {
	b, err := os.ReadFile(pidfile)
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("pid file %s: %v", pidfile, err)
	}
	return pid, nil
}

// Gone is nil when the fake whose id is in pidfile has exited and been
// reaped, and says why not otherwise.
func Gone(pidfile string) error {
	pid, err := ReadPid(pidfile)
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("process %d is still there: kill -0 says %v", pid, err)
	}
	return nil
}

// AssertGone fails t when the fake whose id is in pidfile is still there.
// It does not wait: whatever returned before it (Launch, Stop, exopower's
// exit) has waited for the fake, so a fake still there is a leak.
func AssertGone(t testing.TB, pidfile string) {
	t.Helper()
	if err := Gone(pidfile); err != nil {
		t.Errorf("powermetrics: %v", err)
	}
}

// Zombie reports whether the fake whose id is in pidfile has exited but
// not been reaped: an orphan waits for init to reap it, and no longer
// runs. It reads /proc, so it is false where there is none.
func Zombie(pidfile string) bool {
	pid, err := ReadPid(pidfile)
	if err != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}
