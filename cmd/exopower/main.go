// Command exopower measures the energy that an Apple Silicon Mac's SoC
// (CPU, GPU and ANE) spends while a command runs, or live, from Apple's
// powermetrics.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	// Ctrl-C, SIGTERM and SIGHUP are ways to end, not deaths: exopower
	// stops sampling, prints what it measured and exits.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	code := run(ctx, os.Args[1:], systemStreams())
	stop()
	os.Exit(code)
}
