package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/cli/usage"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/plot"
)

type plotOptions struct {
	input, output string
	size          plot.Size
}

func newPlotCmd(s *cli.Streams) *cobra.Command {
	var o plotOptions
	c := &cobra.Command{
		Use:   "plot [flags] INPUT -o FILE.svg|FILE.png",
		Short: "Draw a recording, a samples file, a bench or a watch",
		Long: `Draw what exopower measured; - reads stdin. The picture's format comes from
the name given to -o: .svg or .png. Its title names what was measured (the
command, the bench's commands, the watch), its caption the Mac's model and
the source. INPUT is one of:

  a recorded powermetrics -f plist stream, or the windows that --samples wrote
  (CSV or NDJSON): the power of each component (total, CPU, GPU, ANE) over
  time, its energy and average power in the title; the measured span is
  shaded where windows reach well outside it; with run --wall, the plug's
  power at the wall as a dashed line;

  the lines of watch --json of this Mac: the same picture of the watch, and
  with watch --wall the plug's power at the wall as a dashed line;

  a bench's JSON (bench --json, --export-json): each run's energy as a point
  over a box per command, the idle baseline's energy over the command's mean
  duration as a band (± its uncertainty) when there is a baseline, and the
  command with the least energy and the comparison in the title; with bench
  --wall, the runs at the wall beside the Mac's, in grey, and their idle band;

  the lines of watch --node --json: a line per node's power over time, on this
  Mac's clock, and their total.

A summary (run --json, run --node --json) has no time series and is refused.`,
		Example: `  exopower plot trace.plist -o trace.svg
  exopower plot --width 1600 --height 600 windows.csv -o windows.png
  exopower bench --export-json b.json 'gzip -k big' 'zstd -k big' && exopower plot b.json -o b.svg
  exopower watch --json -d 1m > w.ndjson && exopower plot w.ndjson -o w.svg
  exopower watch --json -d 1m --node http://mac1:10241 --node http://mac2:10241 > n.ndjson && exopower plot n.ndjson -o n.svg`,
		Args: usage.OneArg("INPUT, the file to draw (- for stdin)", pictureAfterInput),
		RunE: func(c *cobra.Command, args []string) error {
			o.input = args[0]
			return runPlot(s, &o)
		},
	}
	c.Flags().StringVarP(&o.output, "output", "o", "", "write the plot to `FILE`, .svg or .png (required)")
	c.Flags().IntVar(&o.size.Width, "width", plot.DefaultSize.Width, "the plot's width in `PIXELS`")
	c.Flags().IntVar(&o.size.Height, "height", plot.DefaultSize.Height, "the plot's height in `PIXELS`")
	return c
}

func runPlot(s *cli.Streams, o *plotOptions) error {
	if o.output == "" {
		return cli.Fail(errors.New("plot: no file to write the plot to"), "name one with -o, such as -o power.svg or -o power.png")
	}
	if _, err := plot.FormatOf(o.output); err != nil {
		return cli.Fail(fmt.Errorf("-o %w", err))
	}
	if err := o.size.Check(); err != nil {
		return cli.Fail(fmt.Errorf("--width and --height: %w", err))
	}
	if err := output.CheckPath("-o", o.output, nil); err != nil {
		return err
	}
	r, err := s.Open(o.input)
	if err != nil {
		return err
	}
	defer r.Close()
	name := cli.InputName(o.input)
	// A signal ends the reading at once, a read that waits on a pipe, a
	// FIFO or a terminal included, and the writing: the picture is
	// written whole or not at all.
	in := cli.Interruptible(r, s.Signals)
	defer in.Stop()
	// The picture names the file, not the path to it: a picture is
	// shared, the folders it came from are the user's own.
	draw, err := plot.Read(in, filepath.Base(name))
	if in.Interrupted() {
		return cli.Fail(fmt.Errorf("interrupted while reading %s; no plot was written", name))
	}
	if err != nil {
		var se *cli.Error
		if errors.As(err, &se) {
			se.Err = fmt.Errorf("%s: %w", name, se.Err)
			return se
		}
		return cli.Fail(fmt.Errorf("%s: %w", name, err),
			"plot takes a powermetrics -f plist recording, or the CSV or NDJSON that --samples writes",
			"or a bench's JSON (bench --json, --export-json), or the lines of watch --json")
	}
	format, _ := plot.FormatOf(o.output)
	err = output.WriteFile(o.output, func(w io.Writer) error { return draw(interruptible{w, in}, format, o.size) }, nil)
	if err != nil && in.Interrupted() {
		return cli.Fail(fmt.Errorf("interrupted while writing the plot; %s is as it was", o.output))
	}
	return cli.Wrote(o.output, err)
}

// interruptible is a writer whose writes fail once a signal has come:
// a file written through a temporary one is then left as it was.
type interruptible struct {
	w  io.Writer
	in *cli.Interrupt
}

func (w interruptible) Write(p []byte) (int, error) {
	if w.in.Interrupted() {
		return 0, cli.ErrInterrupted
	}
	return w.w.Write(p)
}

// windowFiles are the flags of the files run writes of its windows.
type windowFiles struct{ plot.Files }

func (f *windowFiles) addFlags(c *cobra.Command) {
	c.Flags().StringVar(&f.Samples, "samples", "", "write every window of the run to `FILE`, as CSV or NDJSON by its extension (.csv, .ndjson, .jsonl)")
	c.Flags().StringVar(&f.SamplesFormat, "samples-format", "", "the `FORMAT` of --samples, csv or ndjson, whatever its extension")
	c.Flags().StringVar(&f.Plot, "plot", "", "draw the power of the run over time to `FILE`, .svg or .png")
}

// withFileError is err, what became of the summary and the command, with
// saved, a file of the windows that could not be written, in it: the
// status stays the command's, as for a summary that could not be written.
func withFileError(err, saved error, status int) error {
	if saved == nil {
		return err
	}
	var se *cli.Error
	switch {
	case err == nil:
		return &cli.Error{Status: status, Err: saved, Hints: cli.HintsOf(saved)}
	case errors.As(err, &se) && se.Err == nil:
		return &cli.Error{Status: se.Status, Err: saved, Hints: cli.HintsOf(saved)}
	}
	return err
}
