package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/exopower/exopower/internal/child"
	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/cli/usage"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/source"
)

type recordOptions struct {
	interval time.Duration
	source   string
	count    int
	duration time.Duration
	output   string
	wall     wallOptions
}

func newRecordCmd(s *cli.Streams) *cobra.Command {
	var o recordOptions
	c := &cobra.Command{
		Use:   "record [flags] -o FILE",
		Short: "Write what IOReport and the SMC read, for a bug report or exopower report",
		Long: `Read IOReport's energy counters and the SMC's system power, as --source ioreport
does, and write every reading as it comes to FILE: one JSON line per reading,
each channel's name, unit and raw counter, and the SMC's power (docs/ioreport.md
describes the format). exopower report FILE gives the summary a live run over
those readings would. Ctrl-C, --count or --duration end it. powermetrics makes
its own recordings: sudo powermetrics -f plist ... -o FILE. With --wall, the
metered plug's readings are written too, and report gives the wall from them.`,
		Example: `  exopower record -n 100 -o readings.ndjson
  exopower report readings.ndjson`,
		Args: usage.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runRecord(c.Context(), s, &o) },
	}
	c.Flags().DurationVarP(&o.interval, "interval", "i", 100*time.Millisecond, "time between readings, such as 100ms or 1s")
	c.Flags().StringVar(&o.source, "source", source.Auto, "what to record: ioreport (auto is ioreport); powermetrics records itself with -o")
	c.Flags().IntVarP(&o.count, "count", "n", 0, "stop after N readings, 2 or more (0: no limit)")
	c.Flags().DurationVarP(&o.duration, "duration", "d", 0, "stop after D, such as 30s (0: no limit)")
	c.Flags().StringVarP(&o.output, "output", "o", "", "write the readings to `FILE` as they come (- for stdout; required)")
	o.wall.addFlags(c)
	return c
}

// check refuses flags that cannot make a recording, before anything is
// opened.
func (o *recordOptions) check() error {
	switch {
	case o.output == "":
		return cli.Fail(errors.New("record: no file to write to"), "name one with -o, such as -o readings.ndjson")
	case o.source == source.Powermetrics:
		return cli.Fail(errors.New("record --source powermetrics: powermetrics writes its own recordings"),
			"record with: "+source.CommandLine(o.interval, "-n", "100", "-o", "trace.plist")+", then exopower report trace.plist")
	case o.count == 1:
		return cli.Fail(errors.New("record -n 1: a window runs between two readings, so one reading measures nothing"), "give -n 2 or more, or no -n and stop with Ctrl-C or -d")
	case o.count < 0 || o.duration < 0 || o.interval < 10*time.Millisecond:
		return cli.Fail(fmt.Errorf("record: -n %d, -d %v, -i %v: counts and durations are 0 or more, the interval 10ms or more", o.count, o.duration, o.interval))
	}
	return (source.Options{Kind: o.source, IOReport: openIOReport}).Check()
}

func runRecord(ctx context.Context, s *cli.Streams, o *recordOptions) error {
	if err := o.check(); err != nil {
		return err
	}
	id, err := child.Identify(false, os.Geteuid(), s.Getenv, s.Environ())
	if err != nil {
		return err
	}
	if o.output != "-" {
		if err := output.CheckPath("-o", o.output, id.Cred); err != nil {
			return err
		}
	}
	rec, err := source.OpenRecorder(openIOReport)
	if err != nil {
		return cli.Fail(fmt.Errorf("IOReport: %w", err), "exopower record reads IOReport on an Apple Silicon Mac, as any user; exopower report reads what it wrote anywhere")
	}
	defer rec.Close()
	ctx, stop := cli.CancelOnSignal(ctx, s.Signals)
	defer stop()
	plug, err := o.wall.start(ctx, s, id)
	if err != nil {
		return err
	}
	defer plug.Close()
	if o.duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.duration)
		defer cancel()
	}
	var n int
	record := func(w io.Writer) error {
		var err error
		n, err = rec.Record(ctx, o.interval, o.count, w, recordWall(plug))
		return err
	}
	// Each line goes to the file as it is read: a recording killed
	// keeps what it read.
	name := o.output
	if o.output == "-" {
		name = "stdout"
		err = record(s.Out)
	} else {
		err = output.StreamFile(o.output, record, id.Cred)
	}
	if err != nil {
		return cli.Wrote(name, err)
	}
	fmt.Fprintf(s.Err, "exopower record: %s to %s\n", output.Count(n, "reading"), name)
	return nil
}
