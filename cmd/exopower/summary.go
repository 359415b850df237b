package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/exopower/exopower/internal/child"
	"github.com/exopower/exopower/internal/output"
)

// exitBrokenPipe is the status of a tool that a closed pipe ended: 128 +
// SIGPIPE, as a shell reports one.
const exitBrokenPipe = 128 + 13

// outputError is something exopower prints (a summary, a live line) that
// could not be written where it was to go.
type outputError struct {
	name  string // stdout, stderr or the -o path
	err   error
	hints []string
}

func (e *outputError) Error() string   { return "write " + e.name + ": " + e.err.Error() }
func (e *outputError) Unwrap() error   { return e.err }
func (e *outputError) Hints() []string { return e.hints }

// hintsOf returns the hints that err carries, if it carries any.
func hintsOf(err error) []string {
	var h interface{ Hints() []string }
	if errors.As(err, &h) {
		return h.Hints()
	}
	return nil
}

// wrote names the output that err, a failed write, was on; nil for nil.
func wrote(name string, err error, hints ...string) error {
	if err == nil {
		return nil
	}
	var pe *fs.PathError
	if errors.As(err, &pe) && (pe.Path == "/dev/stdout" || pe.Path == "/dev/stderr") {
		// os.Stdout's name: the message names the stream once.
		err = pe.Err
	}
	return &outputError{name: name, err: err, hints: hints}
}

// brokenPipe reports whether err is a write to a pipe whose reader has
// gone (| head): the reader wants no more, which is no failure to report.
func brokenPipe(err error) bool { return errors.Is(err, syscall.EPIPE) }

// printSummary writes the summary to stdout or stderr, as JSON or text.
// When stdout fails (a full disk, say) the summary goes to stderr
// instead, so that nothing measured is lost; the error names stdout.
func printSummary(s *streams, toStdout, asJSON bool, sum *output.Summary) error {
	w, tty, name := s.Err, s.ErrTTY, "stderr"
	if toStdout {
		w, tty, name = s.Out, s.OutTTY, "stdout"
	}
	var err error
	if asJSON {
		err = output.WriteJSON(w, sum)
	} else {
		err = output.WriteText(w, sum, output.NewStyles(w, tty, s.Getenv))
	}
	if err == nil {
		return nil
	}
	if !toStdout || brokenPipe(err) {
		return wrote(name, err)
	}
	output.WriteText(s.Err, sum, output.NewStyles(s.Err, s.ErrTTY, s.Getenv))
	return wrote(name, err, "the summary above went to stderr instead")
}

// writeSummaryFile writes the summary to the -o file: JSON for .json or
// with --json, text otherwise. When that fails the summary goes to stderr.
func writeSummaryFile(s *streams, sum *output.Summary, path string, asJSON bool, id child.Identity) error {
	asJSON = asJSON || strings.EqualFold(filepath.Ext(path), ".json")
	// Checked again: a link or a directory may have changed since the
	// start, and root must not write where the user may not.
	err := output.CheckPath("-o", path, id.Cred)
	if err != nil {
		output.WriteText(s.Err, sum, output.NewStyles(s.Err, s.ErrTTY, s.Getenv))
		return fmt.Errorf("the summary above was not saved: %w", err)
	}
	err = output.WriteFile(path, func(w io.Writer) error {
		if asJSON {
			return output.WriteJSON(w, sum)
		}
		return output.WriteText(w, sum, &output.Styles{Plain: true})
	}, id.Cred)
	if err == nil {
		return nil
	}
	output.WriteText(s.Err, sum, output.NewStyles(s.Err, s.ErrTTY, s.Getenv))
	return wrote(path, err, "the summary above was not saved; choose a path you can write to with -o")
}
