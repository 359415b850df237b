// Package child runs the command that exopower measures: who it runs as
// (under sudo, the user who typed sudo, with that user's groups), which
// process group it is in, which signals reach it, and the status exopower
// exits with for it.
//
// The package reads neither the environment nor os.Args: the caller
// passes what it needs (getenv, the environment, the effective user id,
// the standard streams), so that tests can run it with made-up ones.
package child

// statusFailure is exopower's own failure, as GNU env and timeout give
// it: the user to run the command as cannot be made out, and the command
// was not started.
const statusFailure = 125

// Error is a failure that decides exopower's exit status: 125 when the
// user to run the command as cannot be made out. The command did not
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
