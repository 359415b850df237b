// Package child runs the command that exopower measures: who it runs as
// (under sudo, the user who typed sudo, with that user's groups), which
// process group it is in, which signals reach it, and the status exopower
// exits with for it.
//
// The package reads neither the environment nor os.Args: the caller
// passes what it needs (getenv, the environment, the effective user id,
// the standard streams), so that tests can run it with made-up ones.
package child

// Statuses that stand for the command when it could not be run, as a
// shell and GNU env give them.
const (
	// statusFailure is exopower's own failure, as GNU env and timeout
	// give it: such as when the user to run the command as cannot be
	// made out, and the command was not started.
	statusFailure = 125
	// statusCannotExecute: the command was found but could not be run.
	statusCannotExecute = 126
	// statusNotFound: there is no such command.
	statusNotFound = 127
)

// Error is a failure that decides exopower's exit status: 125 when the
// user to run the command as cannot be made out, 126 when the command
// cannot be executed, 127 when it is not found. The command did not
// start.
type Error struct {
	// Status is the exit status exopower ends with.
	Status int
	// Err says what went wrong, in a message for the user.
	Err   error
	hints []string
}

func (e *Error) Error() string { return e.Err.Error() }

func (e *Error) Unwrap() error { return e.Err }

// Hints returns next steps for the user, one line each; often none.
func (e *Error) Hints() []string { return e.hints }

// failure is an Error of exopower's own, before the command starts.
func failure(err error, hints ...string) *Error {
	return &Error{Status: statusFailure, Err: err, hints: hints}
}

// notFoundError reads as a shell says it, and keeps the cause (no such
// file, or no such command in PATH) for errors.Is.
type notFoundError struct {
	name string
	err  error
}

func (e *notFoundError) Error() string { return e.name + ": command not found" }

func (e *notFoundError) Unwrap() error { return e.err }
