package main

import (
	"bufio"
	"fmt"
	"os/exec"
	"sync/atomic"
	"syscall"
	"time"
)

// running is a consumer started, and the lines it has written so far.
type running struct {
	cmd   *exec.Cmd
	lines atomic.Int64
	done  chan struct{}
}

// start starts c in its own process group and counts its lines.
func start(c consumer) (*running, error) {
	r := &running{cmd: c.cmd(), done: make(chan struct{})}
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := r.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := r.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		defer close(r.done)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			r.lines.Add(1)
		}
	}()
	return r, nil
}

// stop kills r's process group and waits for it.
func (r *running) stop() {
	syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
	<-r.done
	r.cmd.Wait()
}

// measureTogether runs every consumer at once, from the first-th on, their
// starts spread over an interval so that their wake-ups do not fall
// together, and returns each one's CPU a window, in ns, over the same
// stretch of time: from skip intervals after the last start, for windows
// intervals. Each one's lines in that stretch are counted, not assumed,
// and so many that a window more or less at either end is half a
// percent.
func measureTogether(cs []consumer, first, skip, windows int, interval time.Duration) ([]float64, error) {
	rs := make([]*running, len(cs))
	defer func() {
		for _, r := range rs {
			if r != nil {
				r.stop()
			}
		}
	}()
	for k := range cs {
		i := (first + k) % len(cs)
		r, err := start(cs[i])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", cs[i].name, err)
		}
		rs[i] = r
		time.Sleep(interval / time.Duration(len(cs)))
	}
	time.Sleep(time.Duration(skip) * interval)
	ns0, n0, err := readAll(cs, rs)
	if err != nil {
		return nil, err
	}
	time.Sleep(time.Duration(windows) * interval)
	ns1, n1, err := readAll(cs, rs)
	if err != nil {
		return nil, err
	}
	per := make([]float64, len(cs))
	for i := range cs {
		if n1[i] == n0[i] {
			return nil, fmt.Errorf("%s wrote no line", cs[i].name)
		}
		per[i] = float64(ns1[i]-ns0[i]) / float64(n1[i]-n0[i])
	}
	return per, nil
}

// readAll reads the CPU time and the lines so far of every consumer, one
// right after the other.
func readAll(cs []consumer, rs []*running) (ns, lines []int64, err error) {
	ns, lines = make([]int64, len(rs)), make([]int64, len(rs))
	for i, r := range rs {
		if ns[i], err = cpuNS(r.cmd.Process.Pid); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", cs[i].name, err)
		}
		lines[i] = r.lines.Load()
	}
	return ns, lines, nil
}
