package main

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/fakepm"
)

// tmuxSession runs command in a terminal of width x height that tmux
// holds, as a user's would be, and returns a way to send it keys and one
// to wait until the screen shows what a pattern says. The session is
// ended with the test.
func tmuxSession(t *testing.T, width, height string, env []string, command string) (keys func(...string), await func(string) string) {
	t.Helper()
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("no tmux: .ci/run installs it")
		}
		t.Skip("no tmux here: the screen's test drives a terminal with it")
	}
	sock := filepath.Join(t.TempDir(), "tmux")
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(tmux, append([]string{"-S", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	args := []string{"new-session", "-d", "-x", width, "-y", height}
	for _, e := range env {
		args = append(args, "-e", e)
	}
	run(append(args, command)...)
	run("set-option", "-g", "remain-on-exit", "on")
	t.Cleanup(func() { exec.Command(tmux, "-S", sock, "kill-server").Run() })
	keys = func(k ...string) { t.Helper(); run(append([]string{"send-keys", "-t", "0"}, k...)...) }
	await = func(pattern string) string {
		t.Helper()
		rx := regexp.MustCompile(pattern)
		deadline := time.Now().Add(time.Minute)
		for {
			screen := run("capture-pane", "-p", "-t", "0")
			if rx.MatchString(screen) {
				return screen
			}
			if time.Now().After(deadline) {
				t.Fatalf("the screen never showed %q:\n%s", pattern, screen)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return keys, await
}

// exopower top on a terminal, as a user sees it: the apps of a busy
// (fake) Mac by power under the Mac's figures; keys sort, filter, open an
// app into its processes and go to the rails; q ends it, and the
// terminal is given back as it was, echo and line editing on.
func TestTopOnATerminalAsAUserSeesIt(t *testing.T) {
	t.Parallel()
	exe, err := exec.LookPath("exopower")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	stty := filepath.Join(dir, "stty")
	env := []string{"EXOPOWER_FAKE_IOREPORT=1", "FAKEPM_PROFILE=" + topProfile, fakepm.ProcessesEnv + "=mac", "NO_COLOR=1", "TERM=xterm-256color", "EXOPOWER_TEST_KEYS=1"}
	keys, await := tmuxSession(t, "110", "32", env,
		"trap : INT; stty -a > "+stty+".before; "+exe+" top --source ioreport -i 200ms 2> "+filepath.Join(dir, "stderr")+"; stty -a > "+stty+".after; echo exited $?; sleep 60")
	screen := await(`(?m)^>▸ \S`)
	for _, want := range []string{"exopower top", "procs    509 listed", "APP", "POWER", "Safari", `\x1b]0;pwned\x07`} {
		if !strings.Contains(screen, want) {
			t.Errorf("the screen lacks %q:\n%s", want, screen)
		}
	}
	// The sum on the screen adds up, to the figures' rounding.
	m := regexp.MustCompile(`now +Mac ([0-9.]+) W  =  apps ([0-9.]+) W  \+  rest ([0-9.]+) W`).FindStringSubmatch(screen)
	if m == nil {
		t.Fatalf("no sum on the screen:\n%s", screen)
	}
	var mac, apps, rest float64
	fmt.Sscan(m[1]+" "+m[2]+" "+m[3], &mac, &apps, &rest)
	if mac < 20 || math.Abs(apps+rest-mac) > 0.02 {
		t.Errorf("the screen's sum: apps %v W + rest %v W, Mac %v W", apps, rest, mac)
	}
	keys("n")
	await(`sort name`)
	keys("/", "safari", "Enter")
	screen = await(`filter "safari": 1 of \d+ apps`)
	if n := len(regexp.MustCompile(`(?m)^[> ][▸▾ ] \S.* W `).FindAllString(screen, -1)); n != 1 {
		t.Errorf("%d apps under the filter, want Safari alone:\n%s", n, screen)
	}
	keys("Enter")
	await(`(?m)^>▾ Safari .*\n\s+60[01] .*\n\s+60[01] `)
	keys("Tab")
	await(`power, last 2 minutes, log scale`)
	keys("Tab")
	await(`>▾ Safari`)
	keys("q")
	await(`exited 0`)
	sameTerminal(t, stty)
}

// sameTerminal fails the test where the terminal's settings after top
// (stty's, in files stty.before and stty.after) are not those before.
func sameTerminal(t *testing.T, stty string) {
	t.Helper()
	before, err := os.ReadFile(stty + ".before")
	if err != nil {
		t.Fatal(err)
	}
	after, err := os.ReadFile(stty + ".after")
	if err != nil {
		t.Fatal(err)
	}
	if string(before) != string(after) || !strings.Contains(string(after), " icanon ") || !strings.Contains(string(after), " echo ") {
		t.Errorf("the terminal's settings before top:\n%s\nand after:\n%s", before, after)
	}
}

// Ctrl-C ends top's screen as q does, and gives the terminal back.
func TestTopOnATerminalEndsOnCtrlC(t *testing.T) {
	t.Parallel()
	exe, err := exec.LookPath("exopower")
	if err != nil {
		t.Fatal(err)
	}
	stty := filepath.Join(t.TempDir(), "stty")
	env := []string{"EXOPOWER_FAKE_IOREPORT=1", "FAKEPM_PROFILE=" + topProfile, fakepm.ProcessesEnv + "=mac", "NO_COLOR=1", "EXOPOWER_TEST_KEYS=1"}
	keys, await := tmuxSession(t, "80", "24", env,
		"trap : INT; stty -a > "+stty+".before; "+exe+" top --source ioreport -i 200ms; stty -a > "+stty+".after; echo exited $?; sleep 60")
	await(`(?m)^>▸ \S`)
	keys("C-c")
	await(`exited 0`)
	sameTerminal(t, stty)
}
