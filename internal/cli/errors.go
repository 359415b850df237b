package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"syscall"
)

// Exit statuses of exopower's own, defined here once. Every other status
// is the measured command's: its own, or 128+N when signal N ended it.
const (
	// StatusRegressed: exopower compare (or bench --compare) found a
	// figure that regressed, or changed, as --fail-on says: a failure
	// of the thing measured that a CI job fails on, as pytest-benchmark's
	// --benchmark-compare-fail exits with 1.
	StatusRegressed = 1
	// StatusFailure: exopower could not do what was asked (bad usage,
	// powermetrics missing or refusing, no sample, output not written),
	// as GNU env and timeout give it. The command was not started,
	// unless the message says otherwise.
	StatusFailure = 125
	// StatusCannotExecute: the command was found but could not be run,
	// as a shell says it.
	StatusCannotExecute = 126
	// StatusNotFound: there is no such command, as a shell says it.
	StatusNotFound = 127
	// StatusBrokenPipe: the reader of stdout went away (| head): 128 +
	// SIGPIPE, as a shell reports a tool that SIGPIPE ended.
	StatusBrokenPipe = 128 + 13
)

// Error ends exopower with Status: with a message and the steps that fix
// it, or, with no Err, silently (the measured command's own status).
type Error struct {
	// Status is the exit status exopower ends with.
	Status int
	// Err says what went wrong, for the user; nil says nothing.
	Err error
	// Hints are next steps for the user, one line each; often none.
	Hints []string
}

func (e *Error) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Status)
	}
	return e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Fail is exopower's own failure (StatusFailure), with hints.
func Fail(err error, hints ...string) error {
	return &Error{Status: StatusFailure, Err: err, Hints: hints}
}

// Exit ends exopower with status and nothing to say: the measured
// command's own status. Exit(0) is nil.
func Exit(status int) error {
	if status == 0 {
		return nil
	}
	return &Error{Status: status}
}

// HintsOf returns the hints that err carries, if it carries any.
func HintsOf(err error) []string {
	var e *Error
	if errors.As(err, &e) {
		return e.Hints
	}
	return nil
}

// writeError is something exopower prints (a summary, a live line) that
// could not be written where it was to go.
type writeError struct {
	name string // stdout, stderr or a path
	err  error
}

func (e *writeError) Error() string { return "write " + e.name + ": " + e.err.Error() }
func (e *writeError) Unwrap() error { return e.err }

// Wrote names the output that err, a failed write, was on (stdout,
// stderr or a path), as a failure of exopower's own; nil for nil.
func Wrote(name string, err error, hints ...string) error {
	if err == nil {
		return nil
	}
	var pe *fs.PathError
	if errors.As(err, &pe) && (pe.Path == name || pe.Path == "/dev/stdout" || pe.Path == "/dev/stderr") {
		// The message names the file or the stream once.
		err = pe.Err
	}
	return Fail(&writeError{name: name, err: err}, hints...)
}

// BrokenPipe reports whether err is a write to a pipe whose reader has
// gone (| head): the reader wants no more, which is no failure to report.
func BrokenPipe(err error) bool { return errors.Is(err, syscall.EPIPE) }

// Report writes err to w as the one message exopower prints for it,
// "exopower: error: ..." and its "exopower: hint: ..." lines, and returns
// the status to exit with: 0 for nil. An error that is not an *Error
// (cobra's own: an unknown flag, a missing argument) is a failure of
// usage.
func Report(w io.Writer, err error) int {
	if err == nil {
		return 0
	}
	var we *writeError
	if errors.As(err, &we) && errors.Is(we.err, syscall.EPIPE) {
		// The reader of stdout went away (| head): end quietly, as a
		// Unix tool that SIGPIPE ended.
		return StatusBrokenPipe
	}
	var e *Error
	if !errors.As(err, &e) {
		e = &Error{Status: StatusFailure, Err: err, Hints: []string{"exopower --help shows the usage"}}
	}
	if e.Err != nil {
		// err, not e.Err: a message wrapped around e says where it was.
		fmt.Fprintf(w, "exopower: error: %v\n", err)
		for _, h := range e.Hints {
			fmt.Fprintf(w, "exopower: hint: %s\n", h)
		}
	}
	return e.Status
}
