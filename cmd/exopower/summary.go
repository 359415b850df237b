package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/exopower/exopower/internal/child"
	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/wire"
)

// printSummary writes the summary to stdout or stderr, as JSON or text.
// When stdout fails (a full disk, say) the summary goes to stderr
// instead, so that nothing measured is lost; the error names stdout.
func printSummary(s *cli.Streams, toStdout, asJSON bool, sum *wire.Summary) error {
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
	if !toStdout || cli.BrokenPipe(err) {
		return cli.Wrote(name, err)
	}
	output.WriteText(s.Err, sum, output.NewStyles(s.Err, s.ErrTTY, s.Getenv))
	return cli.Wrote(name, err, "the summary above went to stderr instead")
}

// writeSummaryFile writes the summary to the -o file: JSON for .json or
// with --json, text otherwise. When that fails the summary goes to stderr.
func writeSummaryFile(s *cli.Streams, sum *wire.Summary, path string, asJSON bool, id child.Identity) error {
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
	return cli.Wrote(path, err, "the summary above was not saved; choose a path you can write to with -o")
}
