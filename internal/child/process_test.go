package child

import (
	"bufio"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/cli"
)

// sh starts script under sh, in a process group of its own or in the
// test's (foreground), with stdout on a pipe that the test reads: a line
// the script writes says that it got there, and the pipe's end that every
// process holding it has ended. The command is killed and waited for at
// the end of the test, whatever happens.
func sh(t *testing.T, script string, foreground bool) (*Process, *bufio.Reader) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	// sh tells of children killed by a signal on stderr, which the tests
	// do on purpose: it is shown only when a test fails.
	var stderr strings.Builder
	p, err := Start(Command{
		Argv: []string{"sh", "-c", script}, Path: "/bin/sh",
		Identity: Identity{Env: []string{"PATH=/usr/bin:/bin"}},
		Stdout:   w, Stderr: &stderr, Foreground: foreground,
	})
	w.Close() // the command's copy is the only one left
	if err != nil {
		r.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Kill()
		p.Wait()
		r.Close()
		if t.Failed() && stderr.Len() > 0 {
			t.Logf("the command's stderr:\n%s", stderr.String())
		}
	})
	return p, bufio.NewReader(r)
}

// await reads the line the script writes when it is ready.
func await(t *testing.T, out *bufio.Reader, want string) {
	t.Helper()
	line, err := out.ReadString('\n')
	if strings.TrimSpace(line) != want {
		t.Fatalf("read %q, %v; want the line %q", line, err, want)
	}
}

func TestExitStatusIsTheCommands(t *testing.T) {
	for _, tt := range []struct {
		name   string
		script string
		status int
		signal string
	}{
		{"exits 0", "exit 0", 0, ""},
		{"exits 3", "exit 3", 3, ""},
		{"killed by SIGTERM: 128+15", "kill -TERM $$", 128 + 15, "SIGTERM"},
		{"killed by SIGKILL: 128+9", "kill -KILL $$", 128 + 9, "SIGKILL"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := time.Now()
			p, _ := sh(t, tt.script, false)
			ex := p.Wait()
			if ex.Status != tt.status || ex.Signal != tt.signal || ex.Err != nil {
				t.Errorf("exit %+v, want status %d, signal %q", ex, tt.status, tt.signal)
			}
			if ex.At.Before(before) {
				t.Errorf("ended at %v, before it started at %v", ex.At, before)
			}
		})
	}
}

// Done and Wait can be used by more than one, and after the end.
func TestWaitAgainGivesTheSameExit(t *testing.T) {
	p, _ := sh(t, "exit 5", false)
	<-p.Done()
	first, second := p.Wait(), p.Wait()
	if first != second || first.Status != 5 {
		t.Errorf("Wait gave %+v, then %+v", first, second)
	}
	if p.Pid() <= 0 {
		t.Errorf("pid %d", p.Pid())
	}
}

func TestTheCommandGetsArgvAndEnvAsGiven(t *testing.T) {
	// sh -s reads its script from stdin, and $0 is its own argv[0].
	var out strings.Builder
	p, err := Start(Command{
		Argv: []string{"name-as-typed", "-s", "two words"},
		Path: "/bin/sh", Identity: Identity{Env: []string{"EXOPOWER_TEST_VAR=kept as it is"}},
		Stdin: strings.NewReader(`echo "$0|$1|$EXOPOWER_TEST_VAR|$HOME"`), Stdout: &out,
	})
	if err != nil {
		t.Fatal(err)
	}
	if ex := p.Wait(); ex.Status != 0 || ex.Err != nil {
		t.Fatalf("exit %+v", ex)
	}
	if got, want := out.String(), "name-as-typed|two words|kept as it is|\n"; got != want {
		t.Errorf("output %q, want %q", got, want)
	}
}

// A writer that refuses the command's output does not change its status,
// and the failure is not lost.
func TestAFailingStdoutIsReported(t *testing.T) {
	p, err := Start(Command{Argv: []string{"sh", "-c", "echo hello; exit 4"}, Path: "/bin/sh", Stdout: failingWriter{}})
	if err != nil {
		t.Fatal(err)
	}
	if ex := p.Wait(); ex.Status != 4 || ex.Err != nil {
		// The exit status wins over the copy's failure.
		t.Errorf("exit %+v", ex)
	}
	p, err = Start(Command{Argv: []string{"sh", "-c", "echo hello"}, Path: "/bin/sh", Stdout: failingWriter{}})
	if err != nil {
		t.Fatal(err)
	}
	if ex := p.Wait(); ex.Status != 0 || !errors.Is(ex.Err, errRefused) {
		t.Errorf("exit %+v, want status 0 and the writer's error", ex)
	}
}

var errRefused = errors.New("refused")

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errRefused }

func TestStartFailures(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "not-executable")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho should not run\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name    string
		path    string
		status  int
		message string
		is      error
	}{
		{"127 for no such file", filepath.Join(dir, "missing"), 127, "NAME: command not found", fs.ErrNotExist},
		{"126 for a file that is not executable", script, 126, "NAME: cannot execute: permission denied", fs.ErrPermission},
		{"126 for a directory", dir, 126, "NAME: cannot execute: permission denied", fs.ErrPermission},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Start(Command{Argv: []string{"NAME"}, Path: tt.path})
			if p != nil {
				t.Fatalf("started: %+v", p.Wait())
			}
			var ce *cli.Error
			if !errors.As(err, &ce) || ce.Status != tt.status || err.Error() != tt.message || !errors.Is(err, tt.is) || len(ce.Hints) != 0 {
				t.Errorf("err = %v (%#v), want status %d, %q, wrapping %v", err, err, tt.status, tt.message, tt.is)
			}
		})
	}
	if _, err := Start(Command{Path: "/bin/sh"}); err == nil || errors.As(err, new(*cli.Error)) {
		t.Errorf("no argv: err = %#v", err)
	}
}

// In a group of its own, the command's whole group gets a forwarded
// signal: sh waits for its child, and runs its trap only once the child
// has ended, which only the signal makes it do. The child says it is
// ready itself, so that it is there when the signal comes.
func TestForwardReachesTheCommandsGroup(t *testing.T) {
	p, out := sh(t, `trap "exit 7" TERM; sh -c "echo ready; exec sleep 1000"`, false)
	await(t, out, "ready")
	if err := p.Forward(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if ex := p.Wait(); ex.Status != 7 || ex.Signal != "" {
		t.Errorf("exit %+v, want status 7 from the trap", ex)
	}
	if err := p.Forward(syscall.SIGTERM); err == nil {
		t.Error("forwarding to a command that has ended: no error")
	}
}

// In the terminal's group, the terminal has sent Ctrl-C to the command
// already: Forward does not send it again, and sends other signals to the
// command alone. Were the SIGINT sent, the command would die of it
// before the SIGTERM that follows.
func TestForwardInTheTerminalsGroup(t *testing.T) {
	p, out := sh(t, "echo ready; exec sleep 1000", true)
	await(t, out, "ready")
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		if err := p.Forward(sig); err != nil {
			t.Fatalf("forward %v: %v", sig, err)
		}
	}
	if ex := p.Wait(); ex.Status != 128+15 || ex.Signal != "SIGTERM" {
		t.Errorf("exit %+v, want SIGTERM", ex)
	}
	if err := p.Forward(syscall.SIGTERM); !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("forwarding to a command that has ended: %v", err)
	}
}

// Kill ends the command's whole group: the stdout pipe, which the shell's
// background child holds too, ends only once both are gone.
func TestKillEndsTheWholeGroup(t *testing.T) {
	p, out := sh(t, "sleep 1000 & echo ready; wait", false)
	await(t, out, "ready")
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	if ex := p.Wait(); ex.Status != 128+9 || ex.Signal != "SIGKILL" {
		t.Errorf("exit %+v, want SIGKILL", ex)
	}
	if rest, err := io.ReadAll(out); err != nil || len(rest) != 0 {
		t.Errorf("after the kill, read %q, %v", rest, err)
	}
}

// In the terminal's group, Kill ends the command alone: the group is
// exopower's too.
func TestKillInTheTerminalsGroup(t *testing.T) {
	p, out := sh(t, "echo ready; exec sleep 1000", true)
	await(t, out, "ready")
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	if ex := p.Wait(); ex.Signal != "SIGKILL" {
		t.Errorf("exit %+v, want SIGKILL", ex)
	}
}

// Under sudo by nobody, the command runs as nobody: uid, gid, groups and
// environment.
func TestTheCommandRunsAsTheUserWhoRanSudo(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to run the command as another user")
	}
	nobody, err := user.LookupId("65534")
	if err != nil {
		t.Skip("no user 65534:", err)
	}
	id, err := Identify(false, 0, lookup("SUDO_UID=65534", "SUDO_GID=65534"), []string{"PATH=/usr/bin:/bin", "USER=root"})
	if err != nil {
		t.Fatal(err)
	}
	path, err := Look("id", "/usr/bin:/bin", id.Cred)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	p, err := Start(Command{Argv: []string{"sh", "-c", `"$0" -u; "$0" -g; "$0" -G; echo "$USER $LOGNAME $HOME"`, path},
		Path: "/bin/sh", Identity: id, Stdout: &out, Stderr: &out})
	if err != nil {
		t.Fatal(err)
	}
	if ex := p.Wait(); ex.Status != 0 {
		t.Fatalf("exit %+v: %s", ex, out.String())
	}
	want := "65534\n65534\n65534\n" + nobody.Username + " " + nobody.Username + " " + nobody.HomeDir + "\n"
	if out.String() != want {
		t.Errorf("output %q, want %q", out.String(), want)
	}
}

func TestExitStatusOfAFailedWait(t *testing.T) {
	if status, sig := exitStatus(nil); status != 125 || sig != "" {
		t.Errorf("exitStatus(nil) = %d, %q", status, sig)
	}
}

// Tests run without a controlling terminal, or with one whose foreground
// is go test's; either way ForegroundOnTerminal must say so without
// failing.
func TestForegroundOnTerminalWithoutATerminal(t *testing.T) {
	if _, err := os.Open("/dev/tty"); err == nil {
		t.Skip("the tests have a terminal")
	}
	if ForegroundOnTerminal() {
		t.Error("in the foreground of no terminal")
	}
}

// Ended is true once the command has ended, before Done is closed: here a
// background child holds the command's output open, so exec's wait (and
// Done) waits on it long after the command itself was reaped. A signal
// exopower gets then came after the command's end.
func TestEndedBeforeDoneWhileItsOutputIsStillOpen(t *testing.T) {
	running, out := sh(t, "echo ready; sleep 30", false)
	await(t, out, "ready")
	if running.Ended() {
		t.Errorf("a running command has Ended")
	}
	p, err := Start(Command{
		Argv: []string{"sh", "-c", "sleep 30 & exit 0"}, Path: "/bin/sh",
		Identity: Identity{Env: []string{"PATH=/usr/bin:/bin"}}, Stdout: io.Discard,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Kill(); p.Wait() }) // the group: sleep too
	deadline := time.Now().Add(time.Minute)
	for !p.Ended() {
		if time.Now().After(deadline) {
			t.Fatal("a minute on, a command that exits at once has not Ended")
		}
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case <-p.Done():
		t.Errorf("Done closed while the background sleep holds the output open")
	default:
	}
}
