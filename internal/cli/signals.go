package cli

import (
	"context"
	"os"
	"sync"
)

// CancelOnSignal returns a context that ends when the next signal comes
// from sigs, for a phase that waits on a context (powermetrics's first
// sample, the window that covers the end). System catches the signals
// that end exopower, once; they are handed to whichever phase is running:
// this one, or a loop that reads sigs itself. stop ends the phase and
// reports whether a signal ended it.
func CancelOnSignal(ctx context.Context, sigs <-chan os.Signal) (_ context.Context, stop func() bool) {
	ctx, cancel := context.WithCancel(ctx)
	done, finished := make(chan struct{}), make(chan struct{})
	signalled := false
	var once sync.Once
	go func() {
		defer close(finished)
		select {
		case <-sigs:
			signalled = true
			cancel()
		case <-done:
		}
	}()
	return ctx, func() bool {
		once.Do(func() { close(done) })
		<-finished
		cancel()
		return signalled
	}
}
