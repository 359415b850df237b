package child

import (
	"errors"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Watch sees the command start, and is called back after it exits and
// before it is reaped: the command is a zombie then, still there to be
// read, has ended as far as signals go, and is reaped after. Its exit is
// when the callback says it was.
func TestWatchReadsTheCommandBeforeItIsReaped(t *testing.T) {
	var watched int
	var zombie, endedWhileZombie bool
	started := make(chan *Process, 1)   // the process, once Start has returned it
	exited := time.Now().Add(time.Hour) // a moment no wait could give
	p, err := Start(Command{Argv: []string{"sh", "-c", "exit 3"}, Path: "/bin/sh", Watch: func(pid int) func(func()) time.Time {
		watched = pid
		return func(onExit func()) time.Time {
			var info unix.Siginfo
			if err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil); err != nil {
				t.Errorf("waitid: %v", err)
			}
			onExit()
			zombie = syscall.Kill(pid, 0) == nil
			endedWhileZombie = (<-started).Ended()
			return exited
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	started <- p
	exit := p.Wait()
	if watched != p.Pid() || !zombie || !endedWhileZombie {
		t.Errorf("watched %d (the command is %d), a zombie when read: %v, ended then: %v", watched, p.Pid(), zombie, endedWhileZombie)
	}
	if exit.Status != 3 || !exit.At.Equal(exited) {
		t.Errorf("status %d at %v, want 3 at the moment the callback gave", exit.Status, exit.At)
	}
	if err := syscall.Kill(p.Pid(), 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the command after Wait: %v, want it reaped", err)
	}
}
