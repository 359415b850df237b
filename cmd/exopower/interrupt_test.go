package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/output"
)

// holding waits until the process pid holds path open (its descriptors
// in /proc name it), for at most a minute: by then its signal handlers
// are in place. Only Linux has /proc: elsewhere it skips.
func holding(t *testing.T, pid int, path string) {
	t.Helper()
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc to tell what a process holds open")
	}
	fds := fmt.Sprintf("/proc/%d/fd", pid)
	deadline := time.Now().Add(time.Minute)
	for {
		entries, _ := os.ReadDir(fds)
		for _, e := range entries {
			if l, err := os.Readlink(filepath.Join(fds, e.Name())); err == nil && l == path {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d has not opened %s a minute on", pid, path)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// mkfifo makes a FIFO named name in dir, which no program writes.
func mkfifo(t *testing.T, dir, name string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := unix.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Ctrl-C, SIGTERM and SIGHUP end exopower report at once while it waits
// on a FIFO that no program writes (whose plain open would wait for a
// writer, out of reach of any signal), as they end exopower elsewhere
// before anything was measured: status 125 and a message that says so.
func TestReportOfAFIFOWithNoWriterEndsOnASignal(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			cmd, dir := exopowerCmd(t, "report", "fifo")
			fifo := mkfifo(t, dir, "fifo")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			holding(t, cmd.Process.Pid, fifo)
			cmd.Process.Signal(sig)
			ended := make(chan error, 1)
			go func() { ended <- cmd.Wait() }()
			select {
			case err := <-ended:
				if code := exitCode(t, err); code != 125 || !strings.Contains(stderr.String(), "exopower: error: interrupted while reading fifo; nothing was summarised") {
					t.Errorf("exit status %d, stderr:\n%s", code, stderr.String())
				}
			case <-time.After(time.Minute):
				t.Fatalf("exopower report still runs a minute after %v", sig)
			}
		})
	}
}

// interrupted runs exopower with args in process, with stdin (nil:
// none), sends it SIGTERM once ready has returned, and returns its
// status, stdout and stderr.
func interrupted(t *testing.T, stdin *os.File, ready func(), args ...string) (int, string, string) {
	t.Helper()
	var out, errs bytes.Buffer
	s := &cli.Streams{Out: &out, Err: &errs, Getenv: func(string) string { return "" }, Environ: func() []string { return nil }}
	if stdin != nil {
		s = stdinStreams(stdin, &out, &errs)
	}
	signals := make(chan os.Signal, 1)
	s.Signals = signals
	code := make(chan int, 1)
	go func() { code <- run(context.Background(), args, s) }()
	ready()
	signals <- syscall.SIGTERM
	select {
	case c := <-code:
		return c, out.String(), errs.String()
	case <-time.After(time.Minute):
		t.Fatalf("exopower %s still runs a minute after SIGTERM", strings.Join(args, " "))
	}
	return 0, "", ""
}

// plot and watch --from end on a signal while they wait on a FIFO that
// no program writes, with the message of an interrupted exopower and
// status 125; plot leaves no picture behind.
func TestPlotAndWatchFromAFIFOWithNoWriterEndOnASignal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := mkfifo(t, dir, "fifo")
	svg := filepath.Join(dir, "power.svg")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"plot", in, "-o", svg}, "exopower: error: interrupted while reading " + in + "; no plot was written\n"},
		{[]string{"watch", "--from", in}, "exopower: error: interrupted before the first document from " + in + "; nothing was measured\n"},
	} {
		code, _, errs := interrupted(t, nil, func() {}, c.args...)
		if code != 125 || errs != c.want {
			t.Errorf("%s: exit status %d, stderr:\n%s", strings.Join(c.args, " "), code, errs)
		}
	}
	if _, err := os.Stat(svg); !os.IsNotExist(err) {
		t.Errorf("plot left %s behind: %v", svg, err)
	}
}

// A signal that comes while plot writes its picture fails the writes
// after it: the picture, written through a temporary file, is then not
// written at all, and a file already at -o is left as it was.
func TestASignalWhilePlotWritesLeavesTheFileAsItWas(t *testing.T) {
	path := filepath.Join(t.TempDir(), "power.svg")
	if err := os.WriteFile(path, []byte("<svg>before</svg>"), 0o644); err != nil {
		t.Fatal(err)
	}
	signals := make(chan os.Signal, 1)
	in := cli.Interruptible(io.NopCloser(strings.NewReader("")), signals)
	defer in.Stop()
	err := output.WriteFile(path, func(w io.Writer) error {
		w = interruptible{w, in}
		if _, err := w.Write([]byte("<svg>half")); err != nil {
			return err
		}
		signals <- syscall.SIGTERM
		for deadline := time.Now().Add(time.Minute); !in.Interrupted(); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the signal is not taken a minute on")
			}
		}
		_, err := w.Write([]byte(" of it</svg>"))
		return err
	}, nil)
	if !errors.Is(err, cli.ErrInterrupted) {
		t.Errorf("WriteFile = %v, want the interruption", err)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if b, _ := os.ReadFile(path); string(b) != "<svg>before</svg>" || len(entries) != 1 {
		t.Errorf("%s holds %q, beside %d other files", path, b, len(entries)-1)
	}
}
