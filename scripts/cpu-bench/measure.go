package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// block is how many windows each reading of a run's CPU covers.
const block = 10

// measure runs a consumer until it has written skip+windows lines and
// returns its CPU time a line, in ns, after its skip-th line: each line is
// a window, on every consumer. The CPU is read every block lines and the
// median of the blocks taken, so that a burst of the machine's other work
// in a run, which makes every process on it slower for a while, moves the
// run's figure little.
func measure(c consumer, skip, windows int) (float64, error) {
	cmd := c.cmd()
	// Its own process group, so that what it started goes with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	defer func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	}()
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var blocks []float64
	var last int64
	for n := 1; sc.Scan(); n++ {
		if n < skip || (n-skip)%block != 0 {
			continue
		}
		ns, err := cpuNS(cmd.Process.Pid)
		if err != nil {
			return 0, err
		}
		if n > skip {
			blocks = append(blocks, float64(ns-last)/block)
		}
		last = ns
		if n == skip+windows {
			return spreadOf(blocks).median, nil
		}
	}
	// Its stderr is complete only once it has exited.
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	cmd.Wait()
	return 0, fmt.Errorf("ended before %d lines: %s", skip+windows, strings.TrimSpace(stderr.String()))
}

// cpuNS is the CPU time so far of every thread of process pid, in ns.
func cpuNS(pid int) (int64, error) {
	stats, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(stats) == 0 {
		return 0, errors.Join(errors.New("no /proc/PID/task/*/schedstat: cpu-bench needs Linux"), err)
	}
	var ns int64
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // a thread that ended between the glob and the read
		}
		first, _, _ := strings.Cut(string(b), " ")
		v, err := strconv.ParseInt(first, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", f, err)
		}
		ns += v
	}
	return ns, nil
}
