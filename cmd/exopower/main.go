// Command exopower measures the energy that an Apple Silicon Mac's SoC
// (CPU, GPU and ANE) spends while a command runs, or live, from Apple's
// powermetrics.
package main

import (
	"context"
	"os"
	"os/signal"
	"runtime"
	"syscall"
)

func main() {
	// A meter should not raise what it measures. exopower's work is a
	// fraction of a millisecond a sample, on one goroutine at a time; with
	// one P the Go runtime wakes no second thread to hand each sample
	// over, and exopower wakes the CPU less often for each sample
	// (scripts/bench.sh counts the context switches). This is exopower's
	// own setting: GOMAXPROCS in the environment still reaches the
	// measured command unchanged.
	runtime.GOMAXPROCS(1)
	// Ctrl-C, SIGTERM and SIGHUP are ways to end, not deaths: exopower
	// stops sampling, prints what it measured and exits. They are caught
	// here, once, and handed to whichever phase of a command is running.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	// A write to a closed pipe returns EPIPE instead of killing exopower
	// (Go's default for stdout), so that powermetrics is stopped and the
	// command's status kept. Caught, not ignored: the command starts with
	// SIGPIPE's default, as it would without exopower.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	resized := make(chan os.Signal, 1)
	signal.Notify(resized, syscall.SIGWINCH)
	s := systemStreams()
	s.Signals, s.Resized = sigs, resized
	code := run(context.Background(), os.Args[1:], s)
	signal.Stop(sigs)
	signal.Stop(resized)
	os.Exit(code)
}
