// Command exopower measures the energy that an Apple Silicon Mac's SoC
// (CPU, GPU and ANE) spends while a command runs, or live, from Apple's
// powermetrics.
package main

import (
	"context"
	"os"
	"runtime"

	"github.com/exopower/exopower/internal/cli"
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
	s, stop := cli.System()
	code := run(context.Background(), os.Args[1:], s)
	stop()
	os.Exit(code)
}
