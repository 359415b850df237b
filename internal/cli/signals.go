package cli

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"sync/atomic"
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

// ErrInterrupted is a read that a signal ended (see Interruptible).
var ErrInterrupted = errors.New("interrupted by a signal")

// Interrupt is an input read until the next signal that ends exopower,
// for a command that reads its input to the end (report, plot): the
// signal closes the input, which ends a read that waits on a pipe, a
// FIFO or a terminal, and that read and every read after it fail with
// ErrInterrupted. A read of a file, which never waits, ends at its next
// read.
type Interrupt struct {
	in          io.ReadCloser
	signalled   atomic.Bool
	done, ended chan struct{}
	once        sync.Once
}

// Interruptible reads in until the next signal from sigs (nil: none
// comes). Stop must be called once the reading is over.
func Interruptible(in io.ReadCloser, sigs <-chan os.Signal) *Interrupt {
	i := &Interrupt{in: in, done: make(chan struct{}), ended: make(chan struct{})}
	go func() {
		defer close(i.ended)
		select {
		case <-sigs:
			i.signalled.Store(true)
			in.Close()
		case <-i.done:
		}
	}()
	return i
}

// Read reads the input, until a signal.
func (i *Interrupt) Read(p []byte) (int, error) {
	if i.signalled.Load() {
		return 0, ErrInterrupted
	}
	n, err := i.in.Read(p)
	if err != nil && i.signalled.Load() {
		// The input did not fail: the signal closed it.
		err = ErrInterrupted
	}
	return n, err
}

// Interrupted says whether a signal has come.
func (i *Interrupt) Interrupted() bool { return i.signalled.Load() }

// Stop stops waiting for a signal and reports whether one came. It does
// not close the input.
func (i *Interrupt) Stop() bool {
	i.once.Do(func() { close(i.done) })
	<-i.ended
	return i.signalled.Load()
}
