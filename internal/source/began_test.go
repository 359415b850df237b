package source

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"
)

// began is this process's start. A child process that sleeps 300 ms from
// its start then reads its uptime must read at least that, and no more
// than the time from just before the parent started it to its answer
// (and Linux's clock tick, by which the start may come early).
func TestUptimeIsSinceThisProcessStarted(t *testing.T) {
	if os.Getenv("EXOPOWER_TEST_UPTIME") == "1" {
		time.Sleep(300 * time.Millisecond)
		up, ok := uptime()
		fmt.Printf("uptime %v %v\n", ok, up.Nanoseconds())
		return
	}
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("a process's start is read on Linux and macOS only")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestUptimeIsSinceThisProcessStarted$")
	cmd.Env = append(os.Environ(), "EXOPOWER_TEST_UPTIME=1")
	before := time.Now()
	out, err := cmd.Output()
	most := time.Since(before) + 10*time.Millisecond
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var ok bool
	var ns int64
	if _, err := fmt.Sscanf(strings.TrimSpace(string(out)), "uptime %t %d", &ok, &ns); err != nil || !ok {
		t.Fatalf("the child said %q", out)
	}
	up := time.Duration(ns)
	t.Logf("the child's uptime %v, from 300ms to %v", up, most)
	if up < 300*time.Millisecond || up > most {
		t.Errorf("uptime %v, want from 300ms (the child's sleep) to %v (from before it started)", up, most)
	}
	if b := began(); b.IsZero() || !b.Before(time.Now()) {
		t.Errorf("began %v", b)
	}
}
