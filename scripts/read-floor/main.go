// Command read-floor reads a powermetrics stream the way exopower does and
// does nothing else: no decoding, no sampling, no output. scripts/bench.sh
// measures its CPU as the floor under exopower's own, so that what exopower
// spends beyond it is the work of measuring, and nothing of the cost of
// waking a Go program for every sample, which no Go reader can avoid.
//
// To be a fair floor, it pays for what exopower must pay for to get the
// bytes, and for nothing more:
//
//   - One P (runtime.GOMAXPROCS(1)), as exopower sets for itself: the
//     runtime's wake-ups per read are then the same in both. With more Ps
//     the floor would wake a second thread to hand each read over and
//     cost more than exopower, which would flatter exopower.
//   - The stream through the runtime's poller, as exopower reads it:
//     without arguments, stdin through a non-blocking duplicate, as
//     exopower watch --from - opens it; with a command, that command's
//     stdout through os.Pipe, as exopower run reads powermetrics. A
//     blocking read would save the poller's epoll_wait and be cheaper than
//     any reader that can be stopped by closing its file, which exopower
//     must be.
//   - Reads of 64 KiB, the pipe's capacity and exopower's read size
//     (internal/powermetrics readChunk): one read takes whatever the pipe
//     holds, so the floor reads no more often than exopower does.
//
// Usage: read-floor [COMMAND [ARG...]]
package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"syscall"
)

func main() {
	runtime.GOMAXPROCS(1)
	var f *os.File
	var cmd *exec.Cmd
	if len(os.Args) > 1 {
		r, w, err := os.Pipe()
		if err != nil {
			fail(err)
		}
		cmd = exec.Command(os.Args[1], os.Args[2:]...)
		cmd.Stdout, cmd.Stderr = w, os.Stderr
		if err := cmd.Start(); err != nil {
			fail(err)
		}
		w.Close()
		f = r
	} else {
		fd, err := syscall.Dup(0)
		if err != nil {
			fail(err)
		}
		if err := syscall.SetNonblock(fd, true); err != nil {
			fail(err)
		}
		f = os.NewFile(uintptr(fd), "stdin")
	}
	buf := make([]byte, 64<<10)
	for {
		_, err := f.Read(buf)
		if err == io.EOF {
			break
		}
		if err != nil {
			fail(err)
		}
	}
	f.Close()
	if cmd != nil {
		cmd.Wait()
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "read-floor:", err)
	os.Exit(1)
}
