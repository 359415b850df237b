package output

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/wire"
)

// PrintSummary writes the summary to stdout or stderr, as JSON or text.
// When stdout fails (a full disk, say) the summary goes to stderr
// instead, so that nothing measured is lost; the error names stdout.
func PrintSummary(s *cli.Streams, toStdout, asJSON bool, sum *wire.Summary) error {
	w, tty, name := s.Err, s.ErrTTY, "stderr"
	if toStdout {
		w, tty, name = s.Out, s.OutTTY, "stdout"
	}
	var err error
	if asJSON {
		err = WriteJSON(w, sum)
	} else {
		err = WriteText(w, sum, NewStyles(w, tty, s.Getenv))
	}
	if err == nil {
		return nil
	}
	if !toStdout || cli.BrokenPipe(err) {
		return cli.Wrote(name, err)
	}
	WriteText(s.Err, sum, NewStyles(s.Err, s.ErrTTY, s.Getenv))
	return cli.Wrote(name, err, "the summary above went to stderr instead")
}

// SaveSummary writes the summary to the -o file, as the user cred (nil:
// exopower itself): JSON for .json or with --json, text otherwise. When
// that fails the summary goes to stderr, so that nothing measured is
// lost.
func SaveSummary(s *cli.Streams, sum *wire.Summary, path string, asJSON bool, cred *syscall.Credential) error {
	asJSON = asJSON || strings.EqualFold(filepath.Ext(path), ".json")
	// Checked again: a link or a directory may have changed since the
	// start, and root must not write where the user may not.
	err := CheckPath("-o", path, cred)
	if err != nil {
		WriteText(s.Err, sum, NewStyles(s.Err, s.ErrTTY, s.Getenv))
		return fmt.Errorf("the summary above was not saved: %w", err)
	}
	err = WriteFile(path, func(w io.Writer) error {
		if asJSON {
			return WriteJSON(w, sum)
		}
		return WriteText(w, sum, &Styles{Plain: true})
	}, cred)
	if err == nil {
		return nil
	}
	WriteText(s.Err, sum, NewStyles(s.Err, s.ErrTTY, s.Getenv))
	return cli.Wrote(path, err, "the summary above was not saved; choose a path you can write to with -o")
}

// Export is one of a report's files: its path ("" none, - stdout) and
// what writes it.
type Export struct {
	Path  string
	Write func(io.Writer) error
}

// Deliver writes a report as bench and llm do: its JSON, or the end of
// its text (summary, when not nil), to stdout; then its exports, each
// file as the user cred.
func Deliver(s *cli.Streams, cred *syscall.Credential, asJSON bool, rep any, summary func() error, exports []Export) error {
	var err error
	switch {
	case asJSON:
		err = cli.Wrote("stdout", WriteJSON(s.Out, rep))
	case summary != nil:
		err = cli.Wrote("stdout", summary())
	}
	return WriteExports(s, cred, err, exports)
}

// WriteExports writes a report's exports after the report's own output,
// whose error is err, each file as the user cred (nil: exopower itself),
// and fails with every error but a reader of stdout gone away.
func WriteExports(s *cli.Streams, cred *syscall.Credential, err error, exports []Export) error {
	for _, e := range exports {
		switch e.Path {
		case "":
		case "-":
			err = errors.Join(err, cli.Wrote("stdout", e.Write(s.Out)))
		default:
			err = errors.Join(err, cli.Wrote(e.Path, WriteFile(e.Path, e.Write, cred)))
		}
	}
	if err != nil && !cli.BrokenPipe(err) {
		return cli.Fail(err)
	}
	return nil
}
