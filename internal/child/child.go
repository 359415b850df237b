// Package child runs the command that exopower measures: who it runs as
// (under sudo, the user who typed sudo, with that user's groups), which
// process group it is in, which signals reach it, and the status exopower
// exits with for it.
//
// The package reads neither the environment nor os.Args: the caller
// passes what it needs (getenv, the environment, the effective user id,
// the standard streams), so that tests can run it with made-up ones. Its
// failures before the command starts are *cli.Error: 125 when the user to
// run the command as cannot be made out, 126 when the command cannot be
// executed, 127 when it is not found.
package child

// notFoundError reads as a shell says it, and keeps the cause (no such
// file, or no such command in PATH) for errors.Is.
type notFoundError struct {
	name string
	err  error
}

func (e *notFoundError) Error() string { return e.name + ": command not found" }

func (e *notFoundError) Unwrap() error { return e.err }
