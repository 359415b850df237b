package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/cli/usage"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/sampler"
	"github.com/exopower/exopower/internal/source"
	"github.com/exopower/exopower/internal/wire"
)

type reportOptions struct {
	json    bool
	file    string
	samples string // a format: write the windows to stdout, the summary to stderr
	cost    costOptions
}

func newReportCmd(s *cli.Streams) *cobra.Command {
	var o reportOptions
	c := &cobra.Command{
		Use:   "report [flags] FILE",
		Short: "Summarise a recording: a powermetrics stream, or what exopower record wrote",
		Long: `Read a recording (- for stdin) and print the same summary as exopower run, for
the whole recording: a powermetrics -f plist stream, whose windows follow each
other by their lengths (elapsed_ns) from the first document's timestamp, or an
IOReport recording that exopower record wrote, whose readings say when they
were taken. Works anywhere, Linux included.`,
		Example: `  sudo powermetrics -f plist -i 100 -s cpu_power,gpu_power,thermal -n 100 -o trace.plist
  exopower report trace.plist
  exopower record -n 100 -o readings.ndjson && exopower report readings.ndjson
  exopower report --json trace.plist | jq .energy_joules
  exopower report --samples csv trace.plist > windows.csv`,
		Args: usage.OneArg("FILE, the recording to read (- for stdin)", howToRecord),
		RunE: func(c *cobra.Command, args []string) error {
			o.file = args[0]
			return runReport(s, &o)
		},
	}
	addJSONFlag(c, &o.json)
	c.Flags().StringVar(&o.samples, "samples", "", "write every window to stdout as `FORMAT` (csv or ndjson), and the summary to stderr")
	o.cost.addFlags(c)
	return c
}

func runReport(s *cli.Streams, o *reportOptions) error {
	if err := o.cost.resolve(s.Getenv); err != nil {
		return err
	}
	var format output.SamplesFormat
	if o.samples != "" {
		var err error
		if format, err = output.ParseSamplesFormat(o.samples); err != nil {
			return cli.Fail(fmt.Errorf("--samples: %w", err))
		}
	}
	r, err := s.Open(o.file)
	if err != nil {
		return err
	}
	defer r.Close()
	// A signal ends the reading at once, a read that waits on a pipe, a
	// FIFO or a terminal included: the recording read so far is
	// summarised, since it may be a stream that is gone once read.
	in := cli.Interruptible(r, s.Signals)
	var rows *output.SampleWriter
	if format != "" {
		rows = output.NewSampleWriter(s.Out, format)
	}
	var plug source.Plugged
	res, err := readRecording(in, rows, &plug)
	interrupted := in.Stop()
	switch {
	case err != nil && interrupted:
		return cli.Fail(fmt.Errorf("interrupted while reading %s; nothing was summarised", cli.InputName(o.file)))
	case err != nil:
		return source.RecordingError(o.file, err)
	}
	if rows != nil {
		// The rows of the last windows wait for the recording's end.
		if err := rows.Close(&res); err != nil {
			if cli.BrokenPipe(err) {
				return nil
			}
			return cli.Wrote("stdout", err)
		}
	}
	// A recording has no interval of its own: the mean window stands in.
	interval := res.Duration / time.Duration(res.Samples)
	sum := output.NewSummary(res, res.Start, interval)
	sum.Title = "report: " + cli.InputName(o.file)
	addRecordedWall(sum, plug, res)
	o.cost.rates.Summary(sum)
	if err := output.PrintSummary(s, rows == nil, o.json, sum); err != nil || !interrupted {
		return err
	}
	return cli.Fail(fmt.Errorf("interrupted while reading %s: the summary holds the %d windows read by then", cli.InputName(o.file), res.Samples))
}

// readRecording measures the recording in, and writes each window to
// rows, when not nil, as it is read: a day of windows is never held.
func readRecording(in io.Reader, rows *output.SampleWriter, plug *source.Plugged) (sampler.Result, error) {
	if rows == nil {
		return source.RecordingWithPlug(in, nil, plug)
	}
	// Once the rows cannot be written (their reader went away) the rest
	// of the recording is not read: nothing is printed after that.
	return source.RecordingWithPlug(stopReading{in, rows.Err}, func(o source.Origin, w sampler.Window, tot sampler.Totals) {
		rows.Add(wire.Source{Tool: o.Source, HWModel: o.HWModel, OSBuild: o.OSBuild}, w, tot)
	}, plug)
}

// stopReading reads r until failed says something failed.
type stopReading struct {
	r      io.Reader
	failed func() error
}

func (sr stopReading) Read(p []byte) (int, error) {
	if err := sr.failed(); err != nil {
		return 0, err
	}
	return sr.r.Read(p)
}
