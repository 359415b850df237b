package bench

import (
	"errors"
	"fmt"

	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/output"
)

// HyperfineError is a fault that hyperfine reports too. Its message
// begins with hyperfine's own sentence for it, word for word, its
// capital and full stop kept: what hyperfine's users know, and what
// their scripts look for. exopower's detail follows, bringing its own
// punctuation (": ...", " (...)", or a sentence after hyperfine's full
// stop).
type HyperfineError struct {
	Sentence, Detail string
}

func (e *HyperfineError) Error() string { return e.Sentence + e.Detail }

// failedToRun is a command that could not be started, or whose program
// is not there, as hyperfine says it, with the status, hints and words
// of err, the reason. name is the command's name (-n's, or the command).
func failedToRun(name string, err error) error {
	said := &HyperfineError{Sentence: fmt.Sprintf("Failed to run command '%s'", name), Detail: ": " + err.Error()}
	var e *cli.Error
	if errors.As(err, &e) {
		return &cli.Error{Status: e.Status, Err: said, Hints: e.Hints}
	}
	return cli.Fail(said)
}

// hookNames are hyperfine's names of the unmeasured commands in its
// messages, by their flags.
var hookNames = map[string]string{
	"--setup":    "setup",
	"--prepare":  "preparation",
	"--conclude": "conclusion",
	"--cleanup":  "cleanup",
}

// hookFailed is a hook (flag is its flag) that ended with status, as
// hyperfine says it, then which hook it was: the bench ends there.
func hookFailed(flag, c string, status int) error {
	said := &HyperfineError{
		Sentence: fmt.Sprintf("The %s command terminated with a non-zero exit code.", hookNames[flag]),
		Detail:   fmt.Sprintf(" %s %s failed with status %d", flag, output.ShellQuote([]string{c}), status),
	}
	return cli.Fail(said, "append ' || true' to the command if you are sure that this can be ignored",
		"nothing after it was run; the runs so far are in the summary")
}

// commandFailed is a run of the command named name that ended with
// status (killed by signal, when not ""), as hyperfine says it: run is
// the run's place, from 1, among the warmup runs or the measured ones.
func commandFailed(name string, status int, signal string, warmup bool, run int) *HyperfineError {
	kind := "benchmark"
	if warmup {
		kind = "warmup"
	}
	when := fmt.Sprintf("%s run %d", kind, run)
	if run == 1 {
		when = fmt.Sprintf("the first %s run", kind)
	}
	said := &HyperfineError{
		Sentence: fmt.Sprintf("Command terminated with non-zero exit code %d in %s", status, when),
		Detail:   " of " + output.ShellQuote([]string{name}),
	}
	if signal != "" {
		said.Sentence = "The process has been terminated by a signal in " + when
		said.Detail += fmt.Sprintf(" (%s: status %d)", signal, status)
	}
	return said
}
