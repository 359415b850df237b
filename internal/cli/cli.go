// Package cli is the plumbing every command of exopower shares: the
// standard streams and what is known of their terminals, inputs named
// "-", the signals that end exopower and their hand-off from one phase
// of a command to the next, and the one error type that carries a
// message, the steps that fix it and the status exopower exits with.
//
// The error is made where the fault is known (powermetrics knows the
// sudoers line that fixes it, the child package that a command was not
// found), so any package of exopower's may import this one; it imports
// none of them. Report is the one place where an error becomes text and
// an exit status.
package cli

import (
	"io"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/term"
)

// Streams are the process's standard streams, its environment and its
// signals, passed down so that tests can run exopower in-process.
type Streams struct {
	In       io.Reader
	InFd     int
	Out, Err io.Writer
	// OutTTY and ErrTTY say whether Out and Err are terminals.
	OutTTY, ErrTTY bool
	Getenv         func(string) string
	Environ        func() []string
	// TermSize is the size of the terminal that Out writes to.
	TermSize func() (width, height int, err error)
	// Signals brings the signals that end exopower (SIGINT, SIGTERM,
	// SIGHUP), and Resized the terminal's SIGWINCH; nil in tests that
	// send none.
	Signals, Resized <-chan os.Signal
}

// System returns the process's own streams, with the signals that end
// exopower caught, and the function that stops catching them.
//
// Ctrl-C, SIGTERM and SIGHUP are ways to end, not deaths: exopower stops
// sampling, prints what it measured and exits. They are caught here,
// once, and handed to whichever phase of a command is running (see
// CancelOnSignal). A write to a closed pipe returns EPIPE instead of
// killing exopower (Go's default for stdout), so that powermetrics is
// stopped and the command's status kept; SIGPIPE is caught, not ignored,
// so that the command starts with its default, as it would without
// exopower.
func System() (s *Streams, stop func()) {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	pipe := make(chan os.Signal, 1)
	signal.Notify(pipe, syscall.SIGPIPE)
	resized := make(chan os.Signal, 1)
	signal.Notify(resized, syscall.SIGWINCH)
	s = &Streams{
		In: os.Stdin, InFd: int(os.Stdin.Fd()), Out: os.Stdout, Err: os.Stderr,
		OutTTY:   term.IsTerminal(int(os.Stdout.Fd())),
		ErrTTY:   term.IsTerminal(int(os.Stderr.Fd())),
		Getenv:   os.Getenv,
		Environ:  os.Environ,
		TermSize: func() (int, int, error) { return term.GetSize(int(os.Stdout.Fd())) },
		Signals:  sigs, Resized: resized,
	}
	return s, func() {
		signal.Stop(sigs)
		signal.Stop(pipe)
		signal.Stop(resized)
	}
}
