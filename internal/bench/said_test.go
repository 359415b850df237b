package bench

import "testing"

// A failed run is said in hyperfine's words first: its status, or the
// signal, and which run; then the command it was.
func TestAFailedRunIsSaidAsHyperfineSaysIt(t *testing.T) {
	for _, c := range []struct {
		name   string
		status int
		signal string
		warmup bool
		run    int
		want   string
	}{
		{"exit 2", 2, "", false, 1, "Command terminated with non-zero exit code 2 in the first benchmark run of 'exit 2'"},
		{"false", 1, "", false, 3, "Command terminated with non-zero exit code 1 in benchmark run 3 of false"},
		{"false", 1, "", true, 1, "Command terminated with non-zero exit code 1 in the first warmup run of false"},
		{"false", 1, "", true, 2, "Command terminated with non-zero exit code 1 in warmup run 2 of false"},
		{"kill -9 $$", 137, "SIGKILL", false, 1, "The process has been terminated by a signal in the first benchmark run of 'kill -9 $$' (SIGKILL: status 137)"},
	} {
		if got := commandFailed(c.name, c.status, c.signal, c.warmup, c.run).Error(); got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}
}

// A failed hook is said in hyperfine's words, each hook by hyperfine's
// name for it.
func TestAFailedHookIsSaidAsHyperfineSaysIt(t *testing.T) {
	for flag, want := range map[string]string{
		"--setup":    "The setup command terminated with a non-zero exit code. --setup 'exit 3' failed with status 3",
		"--prepare":  "The preparation command terminated with a non-zero exit code. --prepare 'exit 3' failed with status 3",
		"--conclude": "The conclusion command terminated with a non-zero exit code. --conclude 'exit 3' failed with status 3",
		"--cleanup":  "The cleanup command terminated with a non-zero exit code. --cleanup 'exit 3' failed with status 3",
	} {
		if got := hookFailed(flag, "exit 3", 3).Error(); got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	}
}
