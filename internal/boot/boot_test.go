package boot

import (
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// Every process on this machine reads the same id, 32 hex digits that are
// not the kernel's own.
func TestEveryProcessOfThisBootReadsTheSameID(t *testing.T) {
	if os.Getenv("EXOPOWER_TEST_BOOT") == "1" {
		os.Stdout.WriteString("boot " + ID() + "\n")
		return
	}
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("the boot session is read on Linux and macOS only")
	}
	id := ID()
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(id) {
		t.Fatalf("ID() = %q, want 32 hex digits", id)
	}
	if raw := strings.ReplaceAll(strings.TrimSpace(sessionID()), "-", ""); strings.Contains(id, raw) {
		t.Errorf("ID() = %q gives the kernel's id %q away", id, raw)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestEveryProcessOfThisBootReadsTheSameID$")
	cmd.Env = append(os.Environ(), "EXOPOWER_TEST_BOOT=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !strings.Contains(string(out), "boot "+id+"\n") {
		t.Errorf("another process read %q, this one %q", out, id)
	}
}

// Two boots are told apart; no boot at all is no id.
func TestTwoBootsDigestApartAndNoneIsNoID(t *testing.T) {
	a, b := digest("ae128fd6-2d1b-41fc-bc58-8907a5406e53\n"), digest("ae128fd6-2d1b-41fc-bc58-8907a5406e54")
	if a == b || len(a) != 32 || a != digest("ae128fd6-2d1b-41fc-bc58-8907a5406e53") {
		t.Errorf("digests %q and %q", a, b)
	}
	if d := digest(" \n"); d != "" {
		t.Errorf("no boot id: %q, want none", d)
	}
}
