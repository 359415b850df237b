package powermetrics_test

import (
	"errors"
	"io/fs"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/fakepm"
	"github.com/exopower/exopower/internal/power"
	"github.com/exopower/exopower/internal/powermetrics"
)

// waitExited waits for p to exit, up to a deadline.
func waitExited(t *testing.T, p *powermetrics.Process) {
	t.Helper()
	select {
	case <-p.Exited():
	case <-time.After(30 * time.Second):
		t.Fatal("powermetrics has not exited after 30 s")
	}
}

// drain reads p to the end of its stream and returns how many samples
// came first.
func drain(t *testing.T, p *powermetrics.Process) int {
	t.Helper()
	n := 0
	for {
		_, err := p.Next()
		if powermetrics.EndsStream(err) {
			return n
		}
		if err != nil {
			t.Errorf("sample %d: %v", n, err)
		}
		n++
	}
}

func TestProcessSaysHowPowermetricsEnded(t *testing.T) {
	self := fakeBinary(t)
	tests := []struct {
		name   string
		mode   string
		signal syscall.Signal // sent after the first sample; 0: none
		want   string         // Err's message; "": no error
		code   int
		sig    string
	}{
		{
			name: "one that fails passes on its status and the end of its stderr",
			mode: "die-after=2",
			want: self + " exited with status 3: proc_pidpath() for pid 1 failed with 3; powermetrics: IOReportCreateSubscription failed (fake failure)",
			code: 3,
		},
		{
			name:   "one killed by someone else names the signal",
			signal: syscall.SIGKILL,
			want:   self + " was killed by killed: proc_pidpath() for pid 1 failed with 3",
			code:   -1,
			sig:    "killed",
		},
		{
			name:   "one that someone else ends cleanly did not fail",
			signal: syscall.SIGTERM,
		},
		{
			name: "one that exits when it has written what it was asked for did not fail",
			mode: "exit-after=2",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pidfile := useFake(t, "FAKEPM_MODE", tt.mode)
			p, err := powermetrics.Start(powermetrics.Options{Path: self, Interval: 20 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.Next(); err != nil {
				p.Stop()
				t.Fatal(err)
			}
			if tt.signal != 0 {
				if err := syscall.Kill(readPid(t, pidfile), tt.signal); err != nil {
					t.Fatal(err)
				}
			}
			drain(t, p)
			waitExited(t, p)
			for _, f := range []struct {
				name string
				err  error
			}{{"Err", p.Err()}, {"Stop", p.Stop()}} {
				if tt.want == "" {
					if f.err != nil {
						t.Errorf("%s = %v, want nil", f.name, f.err)
					}
					continue
				}
				var ee *powermetrics.ExitError
				if !errors.As(f.err, &ee) {
					t.Fatalf("%s = %v (%T), want an *ExitError", f.name, f.err, f.err)
				}
				if ee.Code != tt.code || ee.Signal != tt.sig || ee.Path != self || f.err.Error() != tt.want {
					t.Errorf("%s = code %d, signal %q, path %s, %q\nwant code %d, signal %q, %q",
						f.name, ee.Code, ee.Signal, ee.Path, f.err, tt.code, tt.sig, tt.want)
				}
			}
			fakepm.AssertGone(t, pidfile)
		})
	}
}

func TestStopEndsAPowermetricsThatItsSIGTERMKills(t *testing.T) {
	useFake(t)
	// sh becomes sleep, which does not catch SIGTERM.
	p, err := powermetrics.Start(powermetrics.Options{
		Path:     fakeBinary(t),
		Interval: time.Second,
		Prefix:   []string{"/bin/sh", "-c", "exec sleep 600"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Err(); err != nil {
		t.Errorf("Err while it runs = %v, want nil", err)
	}
	if err := p.Stop(); err != nil {
		t.Errorf("Stop = %v, want nil", err)
	}
	select {
	case <-p.Exited():
	default:
		t.Error("Exited is open after Stop")
	}
	if _, err := p.Next(); !powermetrics.EndsStream(err) {
		t.Errorf("Next after Stop = %v, want the end of the stream", err)
	}
}

// With an interval of an hour, only a request can bring a sample. The fake
// drops requests until it is ready, as powermetrics does, so the first
// sample is asked for until it comes; after it, one request is enough.
func TestRequestSampleBringsASampleAtOnce(t *testing.T) {
	pidfile := useFake(t)
	up := pidWhenUp(t, pidfile)
	p, err := powermetrics.Start(powermetrics.Options{Path: fakeBinary(t), Interval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	samples := make(chan power.Sample)
	go func() {
		defer close(samples)
		for {
			s, err := p.Next()
			if err != nil {
				return
			}
			samples <- s
		}
	}()
	defer func() {
		p.Stop()
		for range samples {
		}
	}()
	if !p.CanRequestSample() {
		t.Fatal("CanRequestSample is false for a powermetrics of exopower's own")
	}
	pid := up()
	deadline := time.After(30 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	var first power.Sample
asking:
	for {
		if err := p.RequestSample(); err != nil {
			t.Fatal(err)
		}
		select {
		case first = <-samples:
			break asking
		case <-tick.C:
		case <-deadline:
			t.Fatal("no sample 30 s into asking for one")
		}
	}
	if err := p.RequestSample(); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-samples:
		if first.Index != 0 || s.Index != 1 || s.Window >= time.Minute {
			t.Errorf("samples %d and %d, the second over %v: want 0 and 1, over less than the hour", first.Index, s.Index, s.Window)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no sample 30 s after asking for one")
	}
	if err := p.Stop(); err != nil {
		t.Errorf("Stop = %v, want nil", err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("powermetrics (pid %d) is still there after Stop: kill -0 says %v", pid, err)
	}
}

func TestCanRequestSampleOnlyOfPowermetricsItself(t *testing.T) {
	tests := []struct {
		name   string
		prefix []string
		want   bool
	}{
		{"a powermetrics that exopower runs itself can be asked", nil, true},
		{"one run through another command cannot", []string{"env"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			useFake(t, "FAKEPM_MODE", "silent")
			p, err := powermetrics.Start(powermetrics.Options{Path: fakeBinary(t), Interval: time.Second, Prefix: tt.prefix})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Stop()
			if got := p.CanRequestSample(); got != tt.want {
				t.Errorf("CanRequestSample = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestStartRefusesAnIntervalUnderAMillisecond(t *testing.T) {
	tests := []struct {
		name     string
		interval time.Duration
		want     string
	}{
		{"no interval", 0, "interval 0s is shorter than powermetrics's 1 ms"},
		{"a microsecond short", 999 * time.Microsecond, "interval 999µs is shorter than powermetrics's 1 ms"},
		{"a negative interval", -time.Second, "interval -1s is shorter than powermetrics's 1 ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := powermetrics.Start(powermetrics.Options{Path: fakeBinary(t), Interval: tt.interval})
			if p != nil {
				p.Stop()
			}
			if err == nil || err.Error() != tt.want {
				t.Errorf("Start = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestStartOfAMissingBinaryIsAStartError(t *testing.T) {
	_, err := powermetrics.Start(powermetrics.Options{Path: "/nonexistent/powermetrics", Interval: time.Second})
	var se *powermetrics.StartError
	if !errors.As(err, &se) || se.Path != "/nonexistent/powermetrics" || !errors.Is(err, fs.ErrNotExist) ||
		!strings.HasPrefix(err.Error(), "start /nonexistent/powermetrics: ") {
		t.Errorf("Start = %v (%T), want a *StartError for /nonexistent/powermetrics that is fs.ErrNotExist", err, err)
	}
}
