package plot

import (
	"errors"
	"fmt"
	"io"
	"syscall"

	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/sampler"
)

// Files are the files exopower run writes of its windows: the rows that
// --samples writes, and their picture (--plot), drawn from the same rows
// so that a plot of the samples file is the same picture.
type Files struct {
	// Samples names the rows' file, SamplesFormat its format when its
	// extension does not say; Plot names the picture, .svg or .png.
	Samples, SamplesFormat, Plot string
	format                       output.SamplesFormat
}

// Given says whether any file was asked for.
func (f *Files) Given() bool { return f.Samples != "" || f.Plot != "" }

// Check refuses, before the command starts, files that could not be
// written (by cred: nil is exopower itself) or whose format is unknown.
func (f *Files) Check(cred *syscall.Credential) error {
	var err error
	switch {
	case f.SamplesFormat != "":
		if f.format, err = output.ParseSamplesFormat(f.SamplesFormat); err != nil {
			err = fmt.Errorf("--samples-format: %w", err)
		}
	case f.Samples != "":
		if f.format, err = output.SamplesFormatOf(f.Samples); err != nil {
			err = fmt.Errorf("--samples %w", err)
		}
	}
	if err != nil {
		return cli.Fail(err)
	}
	if f.SamplesFormat != "" && f.Samples == "" {
		return cli.Fail(errors.New("--samples-format without --samples"), "name the file with --samples FILE")
	}
	if _, err := FormatOf(f.Plot); f.Plot != "" && err != nil {
		return cli.Fail(fmt.Errorf("--plot %w", err))
	}
	if err := output.CheckPath("--samples", f.Samples, cred); err != nil {
		return err
	}
	return output.CheckPath("--plot", f.Plot, cred)
}

// Write writes the windows of the span res measured while argv ran,
// which log kept, to the files asked for, as cred, with each window's
// figures at the wall from plug (nil: no plug; see RowsAtWall). The
// first failure is returned; the other file is still written.
func (f *Files) Write(log *output.WindowLog, res sampler.Result, argv []string, plug output.WallReader, cred *syscall.Credential) error {
	if !f.Given() {
		return nil
	}
	rows := log.RowsAtWall(res, plug)
	for i := range rows {
		rows[i].Command = argv
	}
	var first error
	if f.Samples != "" {
		err := output.WriteFile(f.Samples, func(w io.Writer) error { return output.WriteSamples(w, f.format, rows) }, cred)
		first = cli.Wrote(f.Samples, err, "choose a path you can write to with --samples")
	}
	if f.Plot != "" {
		format, _ := FormatOf(f.Plot) // Check took it
		err := output.WriteFile(f.Plot, func(w io.Writer) error {
			return WritePower(w, format, DefaultSize, PowerOf("", rows))
		}, cred)
		if first == nil {
			first = cli.Wrote(f.Plot, err)
		}
	}
	return first
}
