package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/fakepm"
	"github.com/exopower/exopower/internal/powermetrics"
)

// exopowerCmd runs exopower as a real process (the test binary under the
// name TestMain gives it), with the fake powermetrics.
func exopowerCmd(t *testing.T, args ...string) (*exec.Cmd, string) {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("exopower", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "EXOPOWER_POWERMETRICS=fake-powermetrics",
		"FAKEPM_PIDFILE="+filepath.Join(dir, "powermetrics.pid"), "SUDO_UID=", "SUDO_GID=")
	// A test that fails before it waits for exopower leaves nothing
	// running (its powermetrics dies with it, of the parent-death signal).
	t.Cleanup(func() {
		if cmd.Process != nil && cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd, dir
}

// lines reads r line by line into a channel until it ends.
func lines(r io.Reader) <-chan string {
	ch := make(chan string, 64)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			ch <- sc.Text()
		}
	}()
	return ch
}

// await reads lines until one contains want, and returns all read so far.
func await(t *testing.T, ch <-chan string, want string) []string {
	t.Helper()
	var seen []string
	for l := range ch {
		seen = append(seen, l)
		if strings.Contains(l, want) {
			return seen
		}
	}
	t.Fatalf("no line with %q in:\n%s", want, strings.Join(seen, "\n"))
	return nil
}

func waitFile(t *testing.T, path string) {
	t.Helper()
	if err := waitForFile(path); err != nil {
		t.Fatal(err)
	}
}

func exitCode(t *testing.T, err error) int {
	t.Helper()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	if ee == nil {
		return 0
	}
	return ee.ExitCode()
}

// SIGTERM, SIGHUP and SIGINT to exopower reach the command's whole process
// group (the shell's child included); the summary is printed and
// powermetrics stopped.
func TestSignalsGoToTheCommand(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			// sh runs sleep in the foreground, so that a non-interactive
			// shell does not make it ignore SIGINT.
			cmd, dir := exopowerCmd(t, "run", "--", "sh", "-c", "touch started; exec sleep 30")
			stderr, _ := cmd.StderrPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			out := lines(stderr)
			waitFile(t, filepath.Join(dir, "started"))
			cmd.Process.Signal(sig)
			seen := awaitSummary(t, out)
			if code := exitCode(t, cmd.Wait()); code != 128+int(sig) {
				t.Errorf("exit status %d, want %d; stderr:\n%s", code, 128+int(sig), strings.Join(seen, "\n"))
			}
			fakepm.AssertGone(t, filepath.Join(dir, "powermetrics.pid"))
		})
	}
}

// A second Ctrl-C stops at once: the command is killed even if it ignores
// Ctrl-C, the summary of what was measured is printed, and the status is
// the killed command's.
func TestASecondInterruptStopsAtOnce(t *testing.T) {
	t.Parallel()
	cmd, dir := exopowerCmd(t, "run", "--", "sh", "-c", "trap '' INT; touch started; while :; do sleep 1; done")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out := lines(stderr)
	waitFile(t, filepath.Join(dir, "started"))
	cmd.Process.Signal(os.Interrupt)
	await(t, out, "again to stop at once")
	cmd.Process.Signal(os.Interrupt)
	seen := awaitSummary(t, out)
	// The status is the command's, killed: what the summary's exit line says.
	if code := exitCode(t, cmd.Wait()); code != 137 {
		t.Errorf("exit status %d, want 137, the killed command's", code)
	}
	if all := strings.Join(seen, "\n"); !strings.Contains(all, "interrupted twice") || !strings.Contains(all, "exit      137 (SIGKILL)") {
		t.Errorf("stderr:\n%s", all)
	}
	fakepm.AssertGone(t, filepath.Join(dir, "powermetrics.pid"))
}

// SIGKILL to exopower cannot be caught: powermetrics must die all the
// same. On Linux the parent-death signal ends it at once; on macOS it dies
// of SIGPIPE at its next write, since nothing else holds its pipe.
func TestPowermetricsDiesWithAKilledExopower(t *testing.T) {
	t.Parallel()
	cmd, dir := exopowerCmd(t, "run", "-i", "50ms", "--", "sh", "-c", "echo $$ > cmd.pid; touch started; exec sleep 30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFile(t, filepath.Join(dir, "started"))
	cmd.Process.Kill()
	cmd.Wait()
	t.Cleanup(func() {
		// The command is the user's and outlives exopower, as it would
		// outlive a killed shell; the test does not leave it behind.
		if b, err := os.ReadFile(filepath.Join(dir, "cmd.pid")); err == nil {
			var pid int
			fmt.Sscan(string(b), &pid)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	deadline := time.Now().Add(time.Minute)
	for fakepm.Gone(filepath.Join(dir, "powermetrics.pid")) != nil && !fakepm.Zombie(filepath.Join(dir, "powermetrics.pid")) {
		if time.Now().After(deadline) {
			t.Fatal("powermetrics outlived a killed exopower")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Ctrl-C after the command has ended, while exopower waits for the window
// that covers the end, cuts the wait short: the summary of what was
// measured comes at once, says why coverage is short, and the status is
// still the command's. The fake stops writing after its second document
// (the first sample, then the one asked for at the start), so no window
// after the start comes, the covering one included: without the interrupt exopower would wait out its
// deadline (an hour's interval here) and say nothing of one.
func TestAnInterruptWhileWaitingForTheLastWindowEndsAtOnce(t *testing.T) {
	t.Parallel()
	cmd, dir := exopowerCmd(t, "run", "-i", "1h", "--", "sh", "-c", "echo $$ > cmd.pid; exit 3")
	cmd.Env = append(cmd.Env, "FAKEPM_MODE=stall-after=2")
	// The first sample comes at the end of the first window: ask for it.
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out := lines(stderr)
	pmPid := filepath.Join(dir, "powermetrics.pid")
	waitFile(t, pmPid)
	requestFirstSample(t, pmPid)
	cmdPid := filepath.Join(dir, "cmd.pid")
	waitFile(t, cmdPid)
	waitGone(t, cmdPid)
	cmd.Process.Signal(os.Interrupt)
	seen := awaitSummary(t, out)
	if code := exitCode(t, cmd.Wait()); code != 3 {
		t.Errorf("exit status %d, want 3, the command's", code)
	}
	if all := strings.Join(seen, "\n"); !strings.Contains(all, "interrupted while waiting for the window that covers the command's end") {
		t.Errorf("no warning of the interrupted wait in:\n%s", all)
	}
	fakepm.AssertGone(t, pmPid)
}

// requestFirstSample asks the fake powermetrics whose pid is in pidfile
// for a sample, as exopower does at the edges of a run: with a long
// interval, the first one would otherwise come at the end of the first
// window.
func requestFirstSample(t *testing.T, pidfile string) {
	t.Helper()
	pid, err := fakepm.ReadPid(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, powermetrics.SampleSignal); err != nil {
		t.Fatal(err)
	}
}

// awaitSummary reads exopower's stderr up to its summary's total and on to
// its end, and returns all of it.
func awaitSummary(t *testing.T, out <-chan string) []string {
	t.Helper()
	seen := await(t, out, "total")
	for l := range out {
		seen = append(seen, l)
	}
	return seen
}

// waitGone waits until the process whose id is in pidfile has exited and
// been reaped (by exopower, its parent), for at most a minute.
func waitGone(t *testing.T, pidfile string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for fakepm.Gone(pidfile) != nil {
		if time.Now().After(deadline) {
			t.Fatalf("%v, a minute on", fakepm.Gone(pidfile))
		}
		time.Sleep(5 * time.Millisecond)
	}
}
