package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/fakepm"
)

// blockingPipe is a pipe as a shell makes it: both ends blocking, unlike
// those of os.Pipe. Both ends are closed when the test ends.
func blockingPipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	var fds [2]int
	if err := syscall.Pipe(fds[:]); err != nil {
		t.Fatal(err)
	}
	syscall.CloseOnExec(fds[0])
	syscall.CloseOnExec(fds[1])
	// os.NewFile leaves a blocking descriptor as it is.
	r, w = os.NewFile(uintptr(fds[0]), "pipe"), os.NewFile(uintptr(fds[1]), "pipe")
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

func fileFlags(t *testing.T, f *os.File) int {
	t.Helper()
	fl, err := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0)
	if err != nil {
		t.Fatal(err)
	}
	return fl
}

// stdinStreams are the streams of an in-process exopower whose stdin is
// in.
func stdinStreams(in *os.File, out io.Writer, errs *bytes.Buffer) *cli.Streams {
	return &cli.Streams{
		In: in, InFd: int(in.Fd()), Out: out, Err: errs,
		Getenv:  func(string) string { return "" },
		Environ: func() []string { return nil },
	}
}

// The flags of stdin belong to the open file description that the shell
// and the programs after exopower share: watch --from - reads it as it
// is, and leaves it blocking, or the next program to read it fails with
// EAGAIN.
func TestWatchFromStdinLeavesItsFlagsAlone(t *testing.T) {
	t.Parallel()
	r, w := blockingPipe(t)
	before := fileFlags(t, r)
	pm := exec.Command("fake-powermetrics", "-f", "plist", "-i", "50", "-n", "40")
	pm.Stdout = w
	if err := pm.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	var out, errs bytes.Buffer
	code := run(context.Background(), []string{"watch", "--from", "-", "-n", "2", "--json"}, stdinStreams(r, &out, &errs))
	after := fileFlags(t, r)
	r.Close() // the fake ends at its next write
	pm.Wait()
	if code != 0 || strings.Count(out.String(), `"type":"sample"`) != 2 {
		t.Fatalf("exit status %d, stdout:\n%s\nstderr:\n%s", code, out.String(), errs.String())
	}
	if after != before || after&unix.O_NONBLOCK != 0 {
		t.Errorf("stdin's flags were %#o before watch and are %#o after; want them unchanged, without O_NONBLOCK (%#o)", before, after, unix.O_NONBLOCK)
	}
}

// Stdin stays blocking, yet a signal still ends watch --from - while it
// waits for a document that does not come.
func TestWatchFromStdinEndsOnASignalWhileStdinIsSilent(t *testing.T) {
	t.Parallel()
	r, w := blockingPipe(t)
	doc := fakepm.Document{Elapsed: 50 * time.Millisecond, Timestamp: time.Unix(1_800_000_000, 0), Energy: fakepm.Watts{0.2, 0.05, 0.01},
		Layout: fakepm.Layouts["m1"], Samplers: map[string]bool{"cpu_power": true, "gpu_power": true}}
	if _, err := w.Write(append(doc.Append(nil), 0)); err != nil {
		t.Fatal(err)
	}
	scr := newScreen(80, 24)
	var errs bytes.Buffer
	s := stdinStreams(r, nil, &errs)
	signals := make(chan os.Signal, 1)
	s.Out, s.OutTTY, s.TermSize, s.Signals = scr, true, scr.size, signals
	done := make(chan error, 1)
	go func() {
		done <- runWatch(context.Background(), s, &watchOptions{commonOptions: commonOptions{interval: 50 * time.Millisecond}, from: "-"})
	}()
	scr.await(t, regexp.QuoteMeta(enterAlt), 1) // watching, and stdin has nothing more
	signals <- os.Interrupt
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("watch: %v\n%s", err, errs.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("watch still waits for stdin a minute after the signal")
	}
	if fl := fileFlags(t, r); fl&unix.O_NONBLOCK != 0 {
		t.Errorf("stdin left with flags %#o", fl)
	}
}
