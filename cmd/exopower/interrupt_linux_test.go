package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// report - ends on a signal while stdin, a pipe whose writer goes on,
// is silent: the windows read by then are summarised, with a warning,
// and the status says that the report was cut short. Nothing was read
// but the documents the test wrote, all of which were read when it
// sends the signal.
func TestReportFromASilentPipeEndsOnASignalWithWhatItRead(t *testing.T) {
	t.Parallel()
	r, w := blockingPipe(t)
	rec, err := os.ReadFile("../../testdata/fake-m1-compact.plist")
	if err != nil {
		t.Fatal(err)
	}
	wrote := make(chan error, 1)
	go func() {
		_, err := w.Write(rec)
		wrote <- err
	}()
	code, out, errs := interrupted(t, r, func() {
		if err := <-wrote; err != nil {
			t.Error(err)
		}
		drained(t, r)
	}, "report", "--json", "-")
	if code != 125 || !strings.Contains(out, `"samples":6`) || !strings.Contains(out, "the stream ended with an error: interrupted by a signal") ||
		!strings.HasSuffix(errs, "exopower: error: interrupted while reading stdin: the summary holds the 6 windows read by then\n") {
		t.Errorf("exit status %d, stdout:\n%s\nstderr:\n%s", code, out, errs)
	}
}

// drained waits until everything written into the pipe r was read, for
// at most a minute.
func drained(t *testing.T, r *os.File) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		n, err := unix.IoctlGetInt(int(r.Fd()), unix.TIOCINQ)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d bytes in the pipe are still unread a minute on", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
