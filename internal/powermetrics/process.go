package powermetrics

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/exopower/exopower/internal/power"
)

// DefaultPath is where macOS keeps powermetrics.
const DefaultPath = "/usr/bin/powermetrics"

// Samplers are the samplers exopower asks for. cpu_power carries the CPU,
// GPU, ANE and combined power in its processor dict; gpu_power adds the gpu
// dict, which is where a stream without cpu_power keeps the GPU's energy;
// thermal adds thermal_pressure. The default samplers (tasks, disk,
// network, ...) would make each document about 230 KB instead of 12 to
// 65 KB, and the tasks sampler shortens the power window by several
// percent. ane_power is left out: the processor dict already has the ANE,
// and older releases refuse samplers they do not know.
var Samplers = []string{"cpu_power", "gpu_power", "thermal"}

// Args returns the powermetrics arguments for a sample every interval:
// plist output, unbuffered (-b 0: buffered output arrives late and in
// bursts), short flags only (the long name of -i changed between releases).
func Args(interval time.Duration) []string {
	return []string{
		"-f", "plist",
		"-b", "0",
		"-i", strconv.FormatInt(interval.Milliseconds(), 10),
		"-s", strings.Join(Samplers, ","),
	}
}

// CommandLine is the command line that makes a stream exopower reads, as
// people type it (through sudo), with extra arguments such as -n 100 -o
// trace.plist: for hints that say how to record or pipe one.
func CommandLine(interval time.Duration, extra ...string) string {
	return "sudo powermetrics " + strings.Join(append(Args(interval), extra...), " ")
}

// Options says how to run powermetrics.
type Options struct {
	// Path is the powermetrics binary; DefaultPath when empty.
	Path string
	// Interval is the sample interval, at least a millisecond.
	Interval time.Duration
	// Prefix runs powermetrics through another command, such as
	// []string{"sudo", "-n"}.
	Prefix []string
	// Now stamps arrivals; time.Now when nil.
	Now func() time.Time
}

// Process is a running powermetrics and the decoder over its output.
type Process struct {
	cmd      *exec.Cmd
	path     string
	prefixed bool
	dec      *Decoder
	first    *power.Sample // the sample Launch waited for, which Next returns first
	out      *os.File
	stderr   tail
	cancel   context.CancelFunc
	exited   chan struct{}
	waitErr  error
	stopped  bool
	mu       sync.Mutex
	closeOut sync.Once
}

// Start runs powermetrics. Its stdout is read through a pipe that only
// exopower holds, so if exopower dies powermetrics dies of SIGPIPE at its
// next write (and, on Linux, of the parent-death signal at once). It runs
// in a process group of its own so that a Ctrl-C at the terminal reaches
// exopower, which takes the last sample, and not powermetrics.
func Start(opts Options) (*Process, error) {
	if opts.Interval < time.Millisecond {
		return nil, fmt.Errorf("interval %v is shorter than powermetrics's 1 ms", opts.Interval)
	}
	path := opts.Path
	if path == "" {
		path = DefaultPath
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	argv := append(append(append([]string{}, opts.Prefix...), path), Args(opts.Interval)...)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	p := &Process{cmd: cmd, path: path, prefixed: len(opts.Prefix) > 0, cancel: cancel, exited: make(chan struct{})}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 3 * time.Second
	cmd.Stderr = &p.stderr
	cmd.SysProcAttr = sysProcAttr()
	r, w, err := os.Pipe()
	if err != nil {
		cancel()
		return nil, err
	}
	cmd.Stdout = w
	if err := cmd.Start(); err != nil {
		cancel()
		r.Close()
		w.Close()
		return nil, &StartError{Path: argv[0], Err: err}
	}
	w.Close()
	p.out = r
	p.dec = NewDecoder(r, now)
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// Next returns the next sample, as Decoder.Next does. At the end of the
// stream it closes the pipe. Only one goroutine may call it.
func (p *Process) Next() (power.Sample, error) {
	if s := p.first; s != nil {
		p.first = nil
		return *s, nil
	}
	s, err := p.dec.Next()
	if EndsStream(err) {
		p.closeOut.Do(func() { p.out.Close() })
	}
	return s, err
}

// CanRequestSample reports whether RequestSample can work: the signal must
// reach powermetrics itself, so not through sudo, and on macOS only a root
// exopower can signal a root powermetrics.
func (p *Process) CanRequestSample() bool { return !p.prefixed && canSignal() }

// RequestSample asks powermetrics for a sample now (SIGINFO on macOS). The
// sample covers the time since the previous one. powermetrics drops a
// request that comes before it is ready, so ask only after a first sample.
func (p *Process) RequestSample() error {
	return p.cmd.Process.Signal(SampleSignal)
}

// Exited is closed when powermetrics has exited and been waited for.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Stop ends powermetrics (SIGTERM, then SIGKILL after a grace period),
// waits for it, and returns how it ended: nil when it exited cleanly or
// because Stop asked it to, an *ExitError otherwise.
func (p *Process) Stop() error {
	p.mu.Lock()
	select {
	case <-p.exited:
	default:
		p.stopped = true
	}
	p.mu.Unlock()
	p.cancel()
	<-p.exited
	p.closeOut.Do(func() { p.out.Close() })
	return p.Err()
}

// Err returns how powermetrics ended, once Exited is closed: nil for a
// clean exit or one that Stop asked for, an *ExitError otherwise.
func (p *Process) Err() error {
	select {
	case <-p.exited:
	default:
		return nil
	}
	p.mu.Lock()
	stopped := p.stopped
	p.mu.Unlock()
	// After Stop, a clean exit comes back from Wait as the context's
	// cancellation, and an exit by Stop's signal as an ExitError: both
	// are what Stop asked for. An exit status of its own is a failure
	// even then: powermetrics may have failed just before Stop.
	var ee *exec.ExitError
	switch {
	case p.waitErr == nil:
		return nil
	case stopped && errors.Is(p.waitErr, context.Canceled):
		return nil
	case stopped && errors.As(p.waitErr, &ee) && killedBy(ee, syscall.SIGTERM, syscall.SIGKILL):
		return nil
	}
	e := &ExitError{Path: p.path, Code: -1, Stderr: p.stderr.String(), Err: p.waitErr}
	if errors.As(p.waitErr, &ee) {
		e.Code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			e.Signal = ws.Signal().String()
		}
	}
	return e
}

func killedBy(ee *exec.ExitError, sigs ...syscall.Signal) bool {
	ws, ok := ee.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return false
	}
	for _, s := range sigs {
		if ws.Signal() == s {
			return true
		}
	}
	return false
}

// StartError says powermetrics could not be started at all.
type StartError struct {
	Path string
	Err  error
}

func (e *StartError) Error() string { return fmt.Sprintf("start %s: %v", e.Path, e.Err) }
func (e *StartError) Unwrap() error { return e.Err }

// ExitError says powermetrics ended on its own, with a failure.
type ExitError struct {
	Path   string
	Code   int    // exit status, or -1 when a signal ended it
	Signal string // the signal that ended it, if one did
	Stderr string // the end of what it wrote to stderr
	Err    error
}

func (e *ExitError) Error() string {
	how := fmt.Sprintf("exited with status %d", e.Code)
	if e.Signal != "" {
		how = "was killed by " + e.Signal
	}
	if msg := strings.TrimSpace(e.Stderr); msg != "" {
		return fmt.Sprintf("%s %s: %s", e.Path, how, lastLines(msg, 3))
	}
	return fmt.Sprintf("%s %s", e.Path, how)
}

func (e *ExitError) Unwrap() error { return e.Err }

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "; ")
}

// tail keeps the last few KiB written to it: powermetrics writes noise to
// stderr for as long as it runs, and only the end matters for an error.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

const tailSize = 4 << 10

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > tailSize {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailSize:]...)
	}
	return len(b), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
