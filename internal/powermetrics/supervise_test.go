package powermetrics_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync/atomic"
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

// A powermetrics that stays alive but writes nothing more is taken for
// hung once it has been silent as long as the first sample may take: it
// is stopped and started again, and the break says why, as for one that
// died.
func TestSupervisorStartsAHungPowermetricsAgain(t *testing.T) {
	pidfile := useFake(t, "FAKEPM_MODE", "stall-after=2")
	// Long enough that the fake started again gives its first sample
	// within it on a loaded machine (300 ms failed now and then under
	// the race detector): the bound is the supervisor's, not the test's.
	opts := powermetrics.LaunchOptions{Options: powermetrics.Options{Path: fakeBinary(t), Interval: 20 * time.Millisecond}, ReadyTimeout: 1500 * time.Millisecond}
	p, err := powermetrics.Launch(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	first := readPid(t, pidfile)
	s := powermetrics.Supervise(p, opts)
	defer s.Stop()
	var got []string
	for len(got) < 4 {
		smp, err := s.Next()
		var be *power.BreakError
		switch {
		case errors.As(err, &be):
			got = append(got, "break")
			if !strings.Contains(be.Error(), "gave no sample for 1.5s, though it was running") {
				t.Errorf("break %q: want it to say powermetrics hung", be)
			}
		case err != nil:
			t.Fatalf("after %v: %v", got, err)
		default:
			got = append(got, string(rune('0'+smp.Index)))
		}
	}
	if strings.Join(got, " ") != "0 1 break 0" {
		t.Errorf("stream %v, want 0 1 break 0", got)
	}
	if syscall.Kill(first, 0) == nil {
		t.Errorf("the hung powermetrics (pid %d) is still running", first)
	}
	if n, _ := s.Restarts(); n != 1 {
		t.Errorf("%d restarts, want 1", n)
	}
}

// Spans opened and ended in a loop ask for a sample at every edge; past a
// burst, powermetrics takes RequestsPerInterval of them an interval, not
// one every MinRequestGap (which drove it to 45 windows a second at a
// 200 ms interval). The fake answers each request with a document, so the
// documents count the requests that reached it.
func TestSampleRequestsInALoopAreBudgeted(t *testing.T) {
	useFake(t)
	const interval = 200 * time.Millisecond
	opts := powermetrics.LaunchOptions{Options: powermetrics.Options{Path: fakeBinary(t), Interval: interval}}
	p, err := powermetrics.Launch(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	s := powermetrics.Supervise(p, opts)
	if !s.CanRequestSample() {
		t.Skip("this platform cannot signal powermetrics")
	}
	var docs atomic.Int64
	reading := make(chan struct{})
	go func() {
		defer close(reading)
		for {
			if _, err := s.Next(); err != nil {
				return
			}
			docs.Add(1)
		}
	}()
	start := time.Now()
	before := docs.Load()
	for range 300 {
		s.RequestSample()
		time.Sleep(5 * time.Millisecond)
	}
	elapsed := time.Since(start)
	n := docs.Load() - before
	s.Stop()
	<-reading
	intervals := float64(elapsed) / float64(interval)
	// The burst, the budget over the stretch and one deferred request at
	// its end, and the windows that ended by themselves (the fake's are at
	// least half the interval).
	most := int64(powermetrics.RequestBurst+powermetrics.RequestsPerInterval*intervals+1) + int64(2*intervals) + 1
	t.Logf("300 requests over %v: %d documents (at most %d; one per %v would be %d)", elapsed.Round(time.Millisecond), n, most, powermetrics.MinRequestGap, elapsed/powermetrics.MinRequestGap)
	if n > most {
		t.Errorf("%d documents in %v: more requests reached powermetrics than the budget allows", n, elapsed)
	}
}
