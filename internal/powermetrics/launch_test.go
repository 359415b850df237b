package powermetrics_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/fakepm"
	"github.com/exopower/exopower/internal/power"
	"github.com/exopower/exopower/internal/powermetrics"
)

// The test binary doubles as the fake powermetrics: run with
// EXOPOWER_TEST_FAKEPM=1, it is the fake and nothing else. With
// EXOPOWER_TEST_FAKEPM=intel it writes one document in an Intel Mac's
// format and exits, which the fake has no mode for.
func TestMain(m *testing.M) {
	switch os.Getenv("EXOPOWER_TEST_FAKEPM") {
	case "1":
		os.Exit(fakepm.Main(os.Args[1:], os.Stdout, os.Stderr, os.Getenv))
	case "intel":
		os.Stdout.WriteString(intelDocument)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// intelDocument is what powermetrics writes on an Intel Mac: package
// watts, no CPU, GPU or ANE power.
const intelDocument = `<?xml version="1.0" encoding="UTF-8"?>
<plist version="1.0"><dict>
<key>is_delta</key><true/><key>elapsed_ns</key><integer>1000000000</integer>
<key>hw_model</key><string>MacBookPro16,1</string>
<key>processor</key><dict><key>package_joules</key><real>12.5</real><key>package_watts</key><real>12.5</real></dict>
</dict></plist>
`

// fakeBinary is the path of this test binary, which is the fake
// powermetrics when the environment says so.
func fakeBinary(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return self
}

// useFake makes this test binary the fake powermetrics for the processes
// the test starts, with the FAKEPM_ variables given as name, value pairs,
// and returns the file where the fake writes its process id.
func useFake(t *testing.T, env ...string) (pidfile string) {
	t.Helper()
	pidfile = filepath.Join(t.TempDir(), "pid")
	t.Setenv("EXOPOWER_TEST_FAKEPM", "1")
	t.Setenv("FAKEPM_PIDFILE", pidfile)
	for _, name := range []string{"FAKEPM_MODE", "FAKEPM_PROFILE", "FAKEPM_LAYOUT", "FAKEPM_OFFLINE", "FAKEPM_SUDOED"} {
		t.Setenv(name, "")
	}
	for i := 0; i+1 < len(env); i += 2 {
		t.Setenv(env[i], env[i+1])
	}
	return pidfile
}

func readPid(t *testing.T, pidfile string) int {
	t.Helper()
	pid, err := fakepm.ReadPid(pidfile)
	if err != nil {
		t.Fatalf("the fake wrote no pid: %v", err)
	}
	return pid
}

// pidWhenUp makes pidfile a FIFO and returns a function that waits, up to
// a deadline, for the fake to write its process id there: by then the
// fake's runtime is up and it is about to start sampling.
func pidWhenUp(t *testing.T, pidfile string) func() int {
	t.Helper()
	if err := syscall.Mkfifo(pidfile, 0o600); err != nil {
		t.Fatal(err)
	}
	// Opened for reading and writing, the FIFO neither blocks this open
	// nor the fake's.
	f, err := os.OpenFile(pidfile, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return func() int {
		t.Helper()
		f.SetReadDeadline(time.Now().Add(30 * time.Second))
		b := make([]byte, 64)
		n, err := f.Read(b)
		if err != nil {
			t.Fatalf("waiting for the fake to write its pid: %v", err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n])))
		if err != nil {
			t.Fatalf("pid %q: %v", b[:n], err)
		}
		return pid
	}
}

// stubSudo puts a stand-in sudo first on PATH. It takes -n only, as Launch
// uses it; with deny it refuses as sudo does when it would need a
// password, else it runs the command as the fake's needroot mode takes
// for root.
func stubSudo(t *testing.T, deny bool) {
	t.Helper()
	dir := t.TempDir()
	script := "#!/bin/sh\n" +
		`[ "$1" = -n ] || { echo "sudo: the stand-in takes -n only" >&2; exit 1; }` + "\nshift\n"
	if deny {
		script += "echo 'sudo: a password is required' >&2\nexit 1\n"
	} else {
		script += `FAKEPM_SUDOED=1 exec "$@"` + "\n"
	}
	if err := os.WriteFile(filepath.Join(dir, "sudo"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
}

func userName(t *testing.T) string {
	t.Helper()
	u, err := user.Current()
	if err != nil {
		return "USERNAME"
	}
	return u.Username
}

func TestLaunchReturnsTheSampleItWaitedForFirst(t *testing.T) {
	pidfile := useFake(t)
	p, err := powermetrics.Launch(context.Background(), powermetrics.LaunchOptions{
		Options: powermetrics.Options{Path: fakeBinary(t), Interval: 20 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		s, err := p.Next()
		if err != nil {
			t.Fatalf("sample %d: %v", i, err)
		}
		if s.Index != i || s.HWModel != "MacBookPro17,1" || s.Window <= 0 || s.Has != (power.Reported{CPU: true, GPU: true, ANE: true}) {
			t.Errorf("sample %d: index %d, model %q, window %v, has %+v", i, s.Index, s.HWModel, s.Window, s.Has)
		}
	}
	if err := p.Stop(); err != nil {
		t.Errorf("Stop after a clean run = %v, want nil", err)
	}
	fakepm.AssertGone(t, pidfile)
}

func TestLaunchFailsWithWhatWentWrongAndHowToFixIt(t *testing.T) {
	self := fakeBinary(t)
	checkAlone := "check that powermetrics works on its own: sudo powermetrics -n 1 -i 1000 -s cpu_power"
	notFound := []string{
		"exopower measures Apple Silicon Macs, where macOS has /usr/bin/powermetrics",
		"to try exopower elsewhere, point --powermetrics or EXOPOWER_POWERMETRICS at a stand-in (see the README)",
	}
	needsRoot := "powermetrics needs root: " + self + " exited with status 1: powermetrics must be invoked as the superuser"
	if os.Geteuid() != 0 {
		needsRoot += "; sudo -n did not run it either: " + self + " exited with status 1: sudo: a password is required"
	}
	tests := []struct {
		name    string
		env     []string
		path    string
		timeout time.Duration
		want    string
		is      error
		hints   []string
		started bool // the fake gets as far as writing its pid
	}{
		{
			name:  "a path where nothing is is not found",
			path:  "/nonexistent/powermetrics",
			want:  "powermetrics not found at /nonexistent/powermetrics",
			hints: notFound,
		},
		{
			name:  "a name that is nowhere on PATH is not found",
			path:  "exopower-test-no-such-powermetrics",
			want:  "powermetrics not found at exopower-test-no-such-powermetrics",
			hints: notFound,
		},
		{
			name: "a powermetrics that wants the superuser says how to run it as root",
			env:  []string{"FAKEPM_MODE", "notroot"},
			want: needsRoot,
			hints: []string{
				"run exopower with sudo: sudo exopower run -- true",
				"or let " + userName(t) + " run powermetrics through sudo without a password: add this line with sudo visudo -f /etc/sudoers.d/powermetrics:",
				"  " + userName(t) + " ALL=(root) NOPASSWD: " + self,
			},
			started: true,
		},
		{
			name:    "a virtual machine has no power data",
			env:     []string{"FAKEPM_MODE", "vm"},
			want:    "powermetrics: document 0: " + powermetrics.ErrNoPowerData.Error(),
			is:      powermetrics.ErrNoPowerData,
			hints:   []string{"exopower needs an Apple Silicon Mac itself: a virtual machine has no power data"},
			started: true,
		},
		{
			name:  "an Intel Mac is refused",
			env:   []string{"EXOPOWER_TEST_FAKEPM", "intel"},
			want:  "powermetrics: document 0: " + powermetrics.ErrIntel.Error(),
			is:    powermetrics.ErrIntel,
			hints: nil,
		},
		{
			name:    "a powermetrics that ends without a word ended early",
			env:     []string{"FAKEPM_MODE", "empty"},
			want:    "powermetrics ended before its first sample",
			hints:   []string{checkAlone},
			started: true,
		},
		{
			name:  "a powermetrics that fails before its first sample passes on its stderr",
			env:   []string{"FAKEPM_LAYOUT", "nosuch"},
			want:  "powermetrics failed before its first sample: " + self + ` exited with status 64: fake powermetrics: no layout "nosuch" (m1, pro, ultra)`,
			hints: []string{checkAlone},
		},
		{
			name:    "a silent powermetrics is given up on and ended",
			env:     []string{"FAKEPM_MODE", "silent"},
			timeout: 50 * time.Millisecond,
			want:    "powermetrics produced no sample in 50ms",
			hints:   []string{checkAlone},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pidfile := useFake(t, tt.env...)
			stubSudo(t, true)
			path := tt.path
			if path == "" {
				path = self
			}
			p, err := powermetrics.Launch(context.Background(), powermetrics.LaunchOptions{
				Options:      powermetrics.Options{Path: path, Interval: 20 * time.Millisecond},
				ReadyTimeout: tt.timeout,
				Rerun:        "exopower run -- true",
			})
			if p != nil {
				p.Stop()
				t.Fatal("Launch returned a process")
			}
			var le *cli.Error
			if !errors.As(err, &le) {
				t.Fatalf("Launch = %v (%T), want a *cli.Error", err, err)
			}
			if err.Error() != tt.want {
				t.Errorf("Launch = %q\nwant %q", err, tt.want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("Launch = %v, want it to wrap %v", err, tt.is)
			}
			if !slices.Equal(le.Hints, tt.hints) {
				t.Errorf("hints %q\nwant %q", le.Hints, tt.hints)
			}
			if tt.started {
				fakepm.AssertGone(t, pidfile)
			}
		})
	}
}

// A silent powermetrics that is given up on must not outlive Launch. The
// fake may be given up on before it has written its pid; then the wait is
// doubled until it gets that far.
func TestLaunchEndsASilentPowermetrics(t *testing.T) {
	for ready := 50 * time.Millisecond; ; ready *= 2 {
		pidfile := useFake(t, "FAKEPM_MODE", "silent")
		_, err := powermetrics.Launch(context.Background(), powermetrics.LaunchOptions{
			Options:      powermetrics.Options{Path: fakeBinary(t), Interval: 20 * time.Millisecond},
			ReadyTimeout: ready,
		})
		var ns *power.NoSampleError
		if !errors.As(err, &ns) || ns.Waited != ready {
			t.Fatalf("Launch = %v, want a *NoSampleError after %v", err, ready)
		}
		if _, err := os.Stat(pidfile); err == nil {
			fakepm.AssertGone(t, pidfile)
			return
		}
		t.Logf("the fake was ended before it wrote its pid, %v after it started", ready)
	}
}

func TestLaunchInterruptedStartsNothing(t *testing.T) {
	pidfile := useFake(t, "FAKEPM_MODE", "silent")
	pid := pidWhenUp(t, pidfile)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	up := make(chan int, 1)
	go func() {
		up <- pid()
		cancel()
	}()
	p, err := powermetrics.Launch(ctx, powermetrics.LaunchOptions{
		Options:      powermetrics.Options{Path: fakeBinary(t), Interval: 20 * time.Millisecond},
		ReadyTimeout: time.Minute,
	})
	if p != nil {
		p.Stop()
	}
	want := "interrupted before powermetrics's first sample; nothing was started"
	if err == nil || err.Error() != want {
		t.Errorf("Launch = %v, want %q", err, want)
	}
	if err := syscall.Kill(<-up, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("powermetrics is still there: kill -0 says %v", err)
	}
}

// sudoers takes absolute paths only: the line in the hint must name the
// binary by one even when exopower was given a relative path.
func TestLaunchHintsASudoersLineWithAnAbsolutePath(t *testing.T) {
	self := fakeBinary(t)
	useFake(t, "FAKEPM_MODE", "notroot")
	stubSudo(t, true)
	t.Chdir(filepath.Dir(self))
	_, err := powermetrics.Launch(context.Background(), powermetrics.LaunchOptions{
		Options: powermetrics.Options{Path: "./" + filepath.Base(self), Interval: 20 * time.Millisecond},
		Rerun:   "exopower watch",
	})
	var le *cli.Error
	if !errors.As(err, &le) {
		t.Fatalf("Launch = %v, want a *cli.Error", err)
	}
	want := "  " + userName(t) + " ALL=(root) NOPASSWD: " + self
	if !slices.Contains(le.Hints, want) {
		t.Errorf("hints %q\nlack %q", le.Hints, want)
	}
}

// Not root, Launch runs powermetrics through sudo -n. Run as root, the
// tests of that are skipped: cmd/exopower runs them end to end as another
// user.
func TestLaunchWithoutRoot(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root runs powermetrics itself, never through sudo")
	}
	self := fakeBinary(t)
	needsRoot := "powermetrics needs root: " + self + " exited with status 1: powermetrics must be invoked as the superuser"
	tests := []struct {
		name string
		sudo string // "": none on PATH
		want string // "": Launch works
	}{
		{"sudo -n runs powermetrics where sudoers lets it", "allow", ""},
		{"sudo -n that wants a password says so", "deny",
			needsRoot + "; sudo -n did not run it either: " + self + " exited with status 1: sudo: a password is required"},
		{"no sudo at all leaves powermetrics's own refusal", "", needsRoot},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pidfile := useFake(t, "FAKEPM_MODE", "needroot")
			if tt.sudo == "" {
				t.Setenv("PATH", t.TempDir())
			} else {
				stubSudo(t, tt.sudo == "deny")
			}
			p, err := powermetrics.Launch(context.Background(), powermetrics.LaunchOptions{
				Options: powermetrics.Options{Path: self, Interval: 20 * time.Millisecond},
				Rerun:   "exopower watch",
			})
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if p.CanRequestSample() {
					t.Error("CanRequestSample is true for a powermetrics behind sudo")
				}
				if s, err := p.Next(); err != nil || s.Index != 0 {
					t.Errorf("Next = index %d, %v; want the first sample", s.Index, err)
				}
				if err := p.Stop(); err != nil {
					t.Errorf("Stop = %v", err)
				}
				fakepm.AssertGone(t, pidfile)
				return
			}
			var le *cli.Error
			if !errors.As(err, &le) || err.Error() != tt.want {
				t.Fatalf("Launch = %v\nwant %q", err, tt.want)
			}
			if len(le.Hints) != 3 || le.Hints[0] != "run exopower with sudo: sudo exopower watch" {
				t.Errorf("hints %q, want sudo exopower watch and a sudoers line", le.Hints)
			}
		})
	}
}

func TestLaunchWithNoPathRunsMacOSsOwn(t *testing.T) {
	if _, err := os.Stat(powermetrics.DefaultPath); err == nil {
		t.Skip("this machine has a real powermetrics")
	}
	_, err := powermetrics.Launch(context.Background(), powermetrics.LaunchOptions{
		Options: powermetrics.Options{Interval: time.Second},
	})
	want := fmt.Sprintf("powermetrics not found at %s", powermetrics.DefaultPath)
	if err == nil || err.Error() != want {
		t.Errorf("Launch = %v, want %q", err, want)
	}
}

// A caller's deadline is not powermetrics ending: the message says that
// exopower gave up waiting, and nothing is left running.
func TestLaunchPastTheCallersDeadlineSaysSo(t *testing.T) {
	useFake(t, "FAKEPM_MODE", "silent")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	p, err := powermetrics.Launch(ctx, powermetrics.LaunchOptions{
		Options:      powermetrics.Options{Path: fakeBinary(t), Interval: 20 * time.Millisecond},
		ReadyTimeout: time.Hour,
	})
	if p != nil {
		p.Stop()
	}
	if err == nil || !strings.HasPrefix(err.Error(), "gave up waiting for powermetrics's first sample: context deadline exceeded") {
		t.Errorf("Launch = %v, want that exopower gave up waiting", err)
	}
}
