package powermetrics_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/fakepm"
	"github.com/exopower/exopower/internal/power"
	"github.com/exopower/exopower/internal/powermetrics"
)

// A powermetrics that dies is started again after the backoff, and the
// stream goes on with a break that says how the old one ended; Stop ends
// the new one, and nothing is left running.
func TestSupervisorStartsPowermetricsAgain(t *testing.T) {
	pidfile := useFake(t, "FAKEPM_MODE", "die-after=2")
	opts := powermetrics.LaunchOptions{Options: powermetrics.Options{Path: fakeBinary(t), Interval: 20 * time.Millisecond}}
	p, err := powermetrics.Launch(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	first := readPid(t, pidfile)
	s := powermetrics.Supervise(p, opts)
	var got []string
	for len(got) < 5 {
		smp, err := s.Next()
		var be *power.BreakError
		switch {
		case errors.As(err, &be):
			got = append(got, "break")
			if !strings.Contains(be.Error(), "exited with status 3") || powermetrics.EndsStream(err) {
				t.Errorf("break %q: want how the old one ended, and a stream that goes on", be)
			}
		case err != nil:
			t.Fatalf("after %v: %v", got, err)
		default:
			got = append(got, string(rune('0'+smp.Index)))
		}
	}
	// Each fake dies after its second document.
	if strings.Join(got, " ") != "0 1 break 0 1" {
		t.Errorf("stream %v, want 0 1 break 0 1", got)
	}
	if n, err := s.Restarts(); n != 1 || err != nil {
		t.Errorf("restarts %d, %v; want 1, nil", n, err)
	}
	if readPid(t, pidfile) == first {
		t.Errorf("the pid file still names the first powermetrics")
	}
	s.Stop()
	fakepm.AssertGone(t, pidfile)
}

// Stop during the wait before a restart ends the stream at once: Next
// returns io.EOF and starts nothing.
func TestSupervisorStopsDuringTheBackoff(t *testing.T) {
	pidfile := useFake(t, "FAKEPM_MODE", "die-after=1")
	opts := powermetrics.LaunchOptions{Options: powermetrics.Options{Path: fakeBinary(t), Interval: 20 * time.Millisecond}}
	p, err := powermetrics.Launch(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	s := powermetrics.Supervise(p, opts)
	if _, err := s.Next(); err != nil {
		t.Fatal(err)
	}
	first := readPid(t, pidfile)
	done := make(chan error, 1)
	go func() {
		_, err := s.Next()
		done <- err
	}()
	// The fake is gone once it has died; Next then waits out the backoff.
	for {
		if errors.Is(syscall.Kill(first, 0), syscall.ESRCH) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	s.Stop()
	if err := <-done; err != io.EOF {
		t.Errorf("Next after Stop = %v, want io.EOF", err)
	}
	if n, _ := s.Restarts(); n != 0 || readPid(t, pidfile) != first {
		t.Errorf("%d restarts, pid file changed: nothing should have started", n)
	}
}
