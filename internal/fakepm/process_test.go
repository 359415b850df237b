package fakepm

import (
	"bytes"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/powermetrics"
)

// beTheFake makes the test binary the fake powermetrics and nothing else,
// so that signals can be sent to a fake in a process of its own.
const beTheFake = "FAKEPM_TEST_BE_THE_FAKE"

func TestMain(m *testing.M) {
	if os.Getenv(beTheFake) == "1" {
		os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr, os.Getenv))
	}
	os.Exit(m.Run())
}

// patience is how long a test waits for a fake before it calls it hung.
const patience = time.Minute

// watched is a stream that says when marker first appears in it.
type watched struct {
	marker string
	mu     sync.Mutex
	b      bytes.Buffer
	seen   chan struct{}
}

func newWatched(marker string) *watched {
	return &watched{marker: marker, seen: make(chan struct{})}
}

func (w *watched) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	had := bytes.Contains(w.b.Bytes(), []byte(w.marker))
	w.b.Write(p)
	if !had && bytes.Contains(w.b.Bytes(), []byte(w.marker)) {
		close(w.seen)
	}
	return len(p), nil
}

func (w *watched) bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Clone(w.b.Bytes())
}

// subprocess is a fake running in a process of its own.
type subprocess struct {
	cmd    *exec.Cmd
	out    *watched // seen: the first document is whole
	stderr *watched // seen: the fake has begun to sample
	exited chan struct{}
}

func startFake(t *testing.T, args []string, env ...string) *subprocess {
	t.Helper()
	p := &subprocess{out: newWatched("</plist>\n"), stderr: newWatched(noise), exited: make(chan struct{})}
	p.cmd = exec.Command(os.Args[0], args...)
	p.cmd.Env = append(os.Environ(), beTheFake+"=1", "FAKEPM_OFFLINE=", "FAKEPM_MODE=", "FAKEPM_PIDFILE=")
	p.cmd.Env = append(p.cmd.Env, env...)
	p.cmd.Stdout = p.out
	p.cmd.Stderr = p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.exited
	})
	return p
}

func (p *subprocess) waitFirstDocument(t *testing.T) {
	t.Helper()
	select {
	case <-p.out.seen:
	case <-p.exited:
		t.Fatalf("the fake exited before its first document: %s", p.stderr.bytes())
	case <-time.After(patience):
		t.Fatalf("no document after %v", patience)
	}
}

// wait waits for the fake to exit and returns its exit status.
func (p *subprocess) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-p.exited:
	case <-time.After(patience):
		t.Fatalf("the fake has not exited after %v", patience)
	}
	return p.cmd.ProcessState.ExitCode()
}

func (p *subprocess) signal(t *testing.T, sig os.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

// Once the first document is out, the fake has set up its signals: they
// are set up before its first window starts.
func TestStopSignalsEndTheFakeWithStatus0AfterWholeDocuments(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String()+" ends it", func(t *testing.T) {
			p := startFake(t, []string{"-f", "plist", "-i", "20"})
			p.waitFirstDocument(t)
			p.signal(t, sig)
			if code := p.wait(t); code != 0 {
				t.Errorf("exit status %d, want 0 (stderr %q)", code, p.stderr.bytes())
			}
			stream := p.out.bytes()
			if n := len(decodeAll(t, stream)); n < 1 || !bytes.HasSuffix(stream, []byte("</plist>\n")) {
				t.Errorf("%d documents, the last of them cut short", n)
			}
		})
	}
}

func TestTruncateOnExitCutsTheLastDocumentShortOnSIGTERM(t *testing.T) {
	p := startFake(t, []string{"-f", "plist", "-i", "20"}, "FAKEPM_MODE=truncate-on-exit")
	p.waitFirstDocument(t)
	p.signal(t, syscall.SIGTERM)
	if code := p.wait(t); code != 0 {
		t.Errorf("exit status %d, want 0", code)
	}
	whole := checkCut(t, p.out.bytes())
	if len(decodeAll(t, whole)) < 1 {
		t.Error("no whole document before the cut one")
	}
}

// The window is an hour long: the document can only be the answer to a
// request. A request sent before the Go runtime has set up its signals
// would kill the fake, so the first waits for the noise the fake writes
// once it runs; one sent after that but before the fake listens is
// dropped, as powermetrics drops it, so the request is repeated until the
// sample comes.
func TestSampleSignalTakesASampleAtOnce(t *testing.T) {
	p := startFake(t, []string{"-f", "plist", "-i", "3600000", "-n", "1"}, "FAKEPM_PROFILE=0=10,2,0.5")
	deadline := time.After(patience)
	select {
	case <-p.stderr.seen:
	case <-p.exited:
	case <-deadline:
		t.Fatalf("the fake has not begun after %v", patience)
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
asking:
	for {
		p.cmd.Process.Signal(powermetrics.SampleSignal)
		select {
		case <-p.exited:
			break asking
		case <-tick.C:
		case <-deadline:
			t.Fatalf("no sample after %v of requests", patience)
		}
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit status %d, want 0 (stderr %q)", code, p.stderr.bytes())
	}
	checkConstantPower(t, p.out.bytes(), 1, Watts{10, 2, 0.5})
}

// ignore-signal stands for a powermetrics behind something that does not
// pass the sample signal on: the kernel drops the signal before the fake
// sees it, which /proc shows.
func TestIgnoreSignalMakesTheKernelDropTheSampleSignal(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	tests := []struct {
		name    string
		mode    string
		ignored bool
	}{
		{"with ignore-signal the sample signal is ignored", "ignore-signal", true},
		{"without it the fake takes the sample signal", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := startFake(t, []string{"-f", "plist", "-i", "20"}, "FAKEPM_MODE="+tt.mode)
			p.waitFirstDocument(t)
			if got := ignores(t, p.cmd.Process.Pid, powermetrics.SampleSignal); got != tt.ignored {
				t.Errorf("the kernel drops the sample signal: %v, want %v", got, tt.ignored)
			}
			p.signal(t, powermetrics.SampleSignal)
			p.signal(t, syscall.SIGTERM)
			if code := p.wait(t); code != 0 {
				t.Errorf("exit status %d, want 0", code)
			}
		})
	}
}

// ignores reports whether process pid has sig set to be ignored.
func ignores(t *testing.T, pid int, sig syscall.Signal) bool {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if mask, ok := strings.CutPrefix(line, "SigIgn:\t"); ok {
			m, err := strconv.ParseUint(mask, 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			return m&(1<<(sig-1)) != 0
		}
	}
	t.Fatal("no SigIgn in /proc/pid/status")
	return false
}
