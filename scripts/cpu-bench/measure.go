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

// measure runs a consumer until it has written skip+windows lines and
// returns its CPU time a line, in ns, between its skip-th line and its
// last: each line is a window, on every consumer.
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
	var before int64
	for n := 1; sc.Scan(); n++ {
		switch n {
		case skip:
			if before, err = cpuNS(cmd.Process.Pid); err != nil {
				return 0, err
			}
		case skip + windows:
			after, err := cpuNS(cmd.Process.Pid)
			if err != nil {
				return 0, err
			}
			return float64(after-before) / float64(windows), nil
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
