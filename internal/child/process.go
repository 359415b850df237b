package child

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/exopower/exopower/internal/cli"
)

// Command is what to start and how.
type Command struct {
	// Argv is the command line as the user gave it; Argv[0] names the
	// command in messages and reaches it as its argv[0].
	Argv []string
	// Path is the file to execute, from Look.
	Path string
	// Identity is who the command runs as, and its environment (nil
	// for an empty one).
	Identity Identity
	// Stdin, Stdout and Stderr are the command's standard streams; nil
	// is the null device. An *os.File is passed to the command as it is,
	// anything else through a pipe that Wait drains.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Foreground puts the command in exopower's own process group, for
	// when exopower runs in the foreground of a terminal (see
	// ForegroundOnTerminal): the command can then read the terminal, and
	// Ctrl-C reaches it from the terminal as it would without exopower.
	// Otherwise the command gets a process group of its own, and signals
	// are forwarded to all of it.
	Foreground bool
	// Watch, when set, is called with the command's pid once it has
	// started and before anything waits for it. The function it
	// returns, when not nil, is called to wait for the command: it must
	// wait for the exit itself, without reaping (waitid's WNOWAIT), call
	// exited once it has, may then read the command's final usage while
	// it is a zombie, and returns when the command exited (zero when it
	// could not tell); the command is reaped after it.
	Watch func(pid int) (beforeReap func(exited func()) time.Time)
}

// Process is a started command. One goroutine, which Start starts, waits
// for it and ends when it does.
type Process struct {
	cmd        *exec.Cmd
	foreground bool
	done       chan struct{}
	exit       Exit        // set before done is closed
	exited     atomic.Bool // Watch saw the command exit: it is a zombie, or reaped
}

// Exit is how the command ended.
type Exit struct {
	// At is when the wait for the command returned, with a monotonic
	// clock reading: the end of its lifetime as exopower sees it. With a
	// Stdout or Stderr that is not an *os.File, the wait also takes in
	// the copying of the command's last output, which a background child
	// of the command that keeps the pipe open can draw out.
	At time.Time
	// Status is the status exopower exits with for the command: its own,
	// or 128+N when signal N killed it.
	Status int
	// Signal is the name of the signal that killed the command
	// ("SIGTERM"), or empty when it exited by itself.
	Signal string
	// User and System are the CPU time that the command, and the
	// processes it waited for, spent in user mode and in the kernel (its
	// rusage); 0 when the wait failed.
	User, System time.Duration
	// Err is a failure to pass on the command's output through a pipe
	// (a Stdout that is not a file and failed), nil otherwise; Status is
	// the command's all the same. Should the wait itself fail, Err says
	// why and Status is 125, exopower's own failure.
	Err error
}

// Start starts c. It returns a *cli.Error with status 127 when c.Path does
// not exist and 126 when it cannot be executed; the command has then not
// run.
func Start(c Command) (*Process, error) {
	if len(c.Argv) == 0 {
		return nil, errors.New("start: no command")
	}
	env := c.Identity.Env
	if env == nil {
		// exec would take exopower's own environment for nil.
		env = []string{}
	}
	cmd := &exec.Cmd{
		Path: c.Path, Args: c.Argv, Env: env,
		Stdin: c.Stdin, Stdout: c.Stdout, Stderr: c.Stderr,
		SysProcAttr: &syscall.SysProcAttr{Credential: c.Identity.Cred, Setpgid: !c.Foreground},
	}
	if err := cmd.Start(); err != nil {
		return nil, startFailure(c.Argv[0], err)
	}
	p := &Process{cmd: cmd, foreground: c.Foreground, done: make(chan struct{})}
	var beforeReap func(exited func()) time.Time
	if c.Watch != nil {
		beforeReap = c.Watch(cmd.Process.Pid)
	}
	go p.wait(beforeReap)
	return p, nil
}

func (p *Process) wait(beforeReap func(exited func()) time.Time) {
	var exited time.Time
	if beforeReap != nil {
		exited = beforeReap(func() { p.exited.Store(true) })
	}
	err := p.cmd.Wait()
	at := time.Now()
	if !exited.IsZero() {
		// The moment the command exited, before it was read and reaped.
		at = exited
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		err = nil
	}
	p.exit = Exit{At: at, Err: err}
	p.exit.Status, p.exit.Signal = exitStatus(p.cmd.ProcessState)
	if ps := p.cmd.ProcessState; ps != nil {
		p.exit.User, p.exit.System = ps.UserTime(), ps.SystemTime()
	}
	close(p.done)
}

// Pid is the command's process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Done is closed when the command has ended and Wait returns at once.
func (p *Process) Done() <-chan struct{} { return p.done }

// Ended says whether the command has ended, even where Done does not say
// so yet: Done is closed only once exec's Wait has reaped the command and
// copied the last of its output, and a signal that comes in between
// came after the command's end.
func (p *Process) Ended() bool {
	select {
	case <-p.done:
		return true
	default:
	}
	// A zombie answers kill(2) as a live process does.
	return p.exited.Load() || errors.Is(syscall.Kill(p.cmd.Process.Pid, 0), syscall.ESRCH)
}

// Wait waits for the command to end, and says how it did. Any number of
// callers may wait, at once or later.
func (p *Process) Wait() Exit {
	<-p.done
	return p.exit
}

// Forward passes on to the command a signal that exopower received. In a
// process group of its own, the whole group gets it, so that a shell's
// children hear it as they would from a terminal. In the terminal's
// group, a Ctrl-C (SIGINT) has reached the command from the terminal
// already, and sending it again would interrupt its clean-up; other
// signals go to the command alone, as the rest of the group is
// exopower's. The error is the kill(2)'s, such as when the command has
// ended.
func (p *Process) Forward(sig syscall.Signal) error {
	switch {
	case !p.foreground:
		return syscall.Kill(-p.cmd.Process.Pid, sig)
	case sig == syscall.SIGINT:
		return nil
	}
	return p.cmd.Process.Signal(sig)
}

// Kill ends the command at once with SIGKILL: with all of its process
// group when it has one of its own, alone when it shares exopower's.
func (p *Process) Kill() error {
	if p.foreground {
		return p.cmd.Process.Kill()
	}
	return syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
}

// exitStatus returns the status exopower exits with for the command, and
// the name of the signal that ended it, if one did.
func exitStatus(ps *os.ProcessState) (int, string) {
	if ps == nil {
		// The wait itself failed (Exit.Err says why): the command's
		// status is unknown, and exopower cannot give it.
		return cli.StatusFailure, ""
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), unix.SignalName(ws.Signal())
	}
	return ps.ExitCode(), ""
}

// ForegroundOnTerminal reports whether the calling process runs in the
// foreground of its controlling terminal, where Ctrl-C reaches every
// process of its group.
func ForegroundOnTerminal() bool {
	tty, err := os.Open("/dev/tty")
	if err != nil {
		return false
	}
	defer tty.Close()
	pgrp, err := unix.IoctlGetInt(int(tty.Fd()), unix.TIOCGPGRP)
	return err == nil && pgrp == unix.Getpgrp()
}
