package child

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// helperEnv names the helper that the test binary runs as instead of the
// tests, for tests that need a process of their own (see runHelper).
const helperEnv = "EXOPOWER_CHILD_TEST_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "foreground":
		// Report what a process in this place sees.
		fmt.Println(ForegroundOnTerminal())
		os.Exit(0)
	case "background":
		// Report what a process in a new group of this session sees:
		// one that the terminal does not read from.
		cmd := exec.Command(os.Args[0])
		cmd.Env = []string{helperEnv + "=foreground"}
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
