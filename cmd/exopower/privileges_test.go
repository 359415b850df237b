package main

import (
	"cmp"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/exopower/exopower/internal/fakepm"
)

// fakeSudo stands in for sudo: it takes -n only (never a prompt), and
// either refuses as sudo does when a password would be needed, or runs the
// command with FAKEPM_SUDOED=1, which the fake powermetrics in needroot
// mode takes for root.
const fakeSudo = `#!/bin/sh
[ "$1" = -n ] || { echo "sudo: the stand-in takes -n only" >&2; exit 1; }
shift
if [ -n "$FAKE_SUDO_DENY" ]; then echo "sudo: a password is required" >&2; exit 1; fi
FAKEPM_SUDOED=1 exec "$@"
`

// asNobody runs exopower as user 65534 in a folder that user can read,
// with the fake powermetrics (which insists on root) and a stand-in sudo.
func asNobody(t *testing.T, env []string, args ...string) (stdout, stderr string, code int, dir string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root, to run exopower as another user")
	}
	dir, err := os.MkdirTemp("", "exopower-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	copyFile(t, self, filepath.Join(dir, "exopower"))
	copyFile(t, cmp.Or(fakepm.Plain(), self), filepath.Join(dir, "fake-powermetrics"))
	if err := os.WriteFile(filepath.Join(dir, "sudo"), []byte(fakeSudo), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(dir, "exopower"), args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + dir + ":/usr/bin:/bin", "HOME=" + dir, "EXOPOWER_POWERMETRICS=fake-powermetrics",
		"FAKEPM_MODE=needroot", "FAKEPM_PIDFILE=" + filepath.Join(dir, "powermetrics.pid")}, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	code = exitCode(t, cmd.Run())
	return out.String(), errb.String(), code, dir
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}

// Not root, and sudoers lets the user run powermetrics without a
// password: exopower runs it through sudo -n, and the command as the user.
func TestNotRootUsesSudoWithoutAPrompt(t *testing.T) {
	t.Parallel()
	stdout, stderr, code, dir := asNobody(t, nil, "run", "--", "id", "-u")
	if code != 0 || strings.TrimSpace(stdout) != "65534" {
		t.Fatalf("status %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "  total ") {
		t.Errorf("no summary:\n%s", stderr)
	}
	fakepm.AssertGone(t, filepath.Join(dir, "powermetrics.pid"))
}

// Not root, and sudo would want a password: an error before the command
// starts, with both ways out.
func TestNotRootWithoutSudoFailsBeforeTheCommand(t *testing.T) {
	t.Parallel()
	_, stderr, code, dir := asNobody(t, []string{"FAKE_SUDO_DENY=1"}, "run", "--", "touch", "ran")
	if code != 125 {
		t.Errorf("status %d, want 125", code)
	}
	for _, want := range []string{
		"exopower: hint:   nobody ALL=(root) NOPASSWD: " + filepath.Join(dir, "fake-powermetrics") + "\n",
		"exopower: error: powermetrics needs root: ",
		"powermetrics must be invoked as the superuser",
		"sudo -n did not run it either: ",
		"sudo: a password is required",
		"exopower: hint: run exopower with sudo: sudo exopower run -- touch ran\n",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Error("the command ran")
	}
}
