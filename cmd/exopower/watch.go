package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/powermetrics"
	"github.com/exopower/exopower/internal/sampler"
	"github.com/exopower/exopower/internal/wire"
)

type watchOptions struct {
	commonOptions
	count    int
	duration time.Duration
	from     string
	nodes    nodeOptions
}

func newWatchCmd(s *cli.Streams) *cobra.Command {
	var o watchOptions
	c := &cobra.Command{
		Use:   "watch [flags]",
		Short: "Show the SoC's power live",
		Long: `Show the SoC's power as powermetrics samples it: a panel redrawn in place on
a terminal, one line per sample otherwise, NDJSON with --json. Ctrl-C, --count
or --duration end it with the same summary as exopower run.`,
		Example: `  sudo exopower watch
  sudo exopower watch --json --duration 10m > power.ndjson
  sudo powermetrics -f plist -b 0 -i 1000 -s cpu_power,gpu_power,thermal | exopower watch --from -`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runWatch(c.Context(), s, &o) },
	}
	o.addFlags(c, time.Second)
	c.Flags().IntVarP(&o.count, "count", "n", 0, "stop after N samples (0: no limit)")
	c.Flags().DurationVarP(&o.duration, "duration", "d", 0, "stop after D, such as 30s or 10m (0: no limit)")
	c.Flags().StringVar(&o.from, "from", "", "read a powermetrics -f plist stream from `FILE` (- for stdin) instead of starting powermetrics")
	o.nodes.addFlags(c)
	return c
}

// update is a window of the watched span and the span's totals after it.
type update struct {
	w   sampler.Window
	tot sampler.Totals
}

func runWatch(ctx context.Context, s *cli.Streams, o *watchOptions) error {
	if err := o.validate(); err != nil {
		return err
	}
	if o.count < 0 {
		return cli.Fail(fmt.Errorf("--count %d is out of range: it takes 0 (no limit, the default) or more samples", o.count))
	}
	if o.duration < 0 {
		return cli.Fail(fmt.Errorf("--duration %v is out of range: it takes 0 (no limit, the default) or more, such as 10m", o.duration))
	}
	if o.nodes.given() {
		if o.from != "" {
			return cli.Fail(errors.New("--from and --node cannot go together"), "watch a stream with --from, or Macs with --node")
		}
		return o.watchNodes(ctx, s)
	}
	startCtx, stopStart := cli.CancelOnSignal(ctx, s.Signals)
	meter, err := startSource(startCtx, s, o)
	stopStart()
	if err != nil {
		return err
	}
	updates := make(chan update, 64)
	span := meter.Begin(ctx, func(w sampler.Window, tot sampler.Totals) { updates <- update{w, tot} })
	sink, err := output.NewSink(output.SinkConfig{
		Format:   output.ChooseFormat(o.json, s.OutTTY),
		Terminal: output.Terminal{Out: s.Out, TTY: s.OutTTY, Size: s.TermSize},
		Getenv:   s.Getenv,
		Origin:   span.Start,
		Source:   func() wire.Source { return streamSource(meter) },
	})
	end := span.Start
	if err == nil {
		end, err = o.follow(s, meter, span.Start, sink, updates)
		if cerr := sink.Close(); err == nil {
			err = cerr
		}
	}
	res := closeSpan(s, meter, span, end, updates)
	sum := output.NewSummary(res, span.Start, o.interval)
	sum.Title = "watch"
	// The summary of what was measured is printed even when the live
	// output failed; the failure is what watch then exits with.
	serr := printSummary(s, o.json, o.json, sum)
	if err != nil {
		return cli.Wrote("stdout", err)
	}
	return serr
}

// follow shows the windows as they come, until --count, --duration, a
// signal, the end of the stream or a failure to show one, and returns the
// end of the span and that failure.
func (o *watchOptions) follow(s *cli.Streams, meter *sampler.Sampler, t0 time.Time, sink output.Sink, updates <-chan update) (time.Time, error) {
	var timeout <-chan time.Time
	if o.duration > 0 {
		timer := time.NewTimer(o.duration - time.Since(t0))
		defer timer.Stop()
		timeout = timer.C
	}
	var last time.Time // the end of the last window shown
	for n := 1; ; n++ {
		select {
		case u := <-updates:
			if o.duration > 0 && !u.w.End.Before(t0.Add(o.duration)) {
				return t0.Add(o.duration), nil
			}
			last = u.w.End
			if err := sink.Window(u.w, u.tot); err != nil || n == o.count {
				return last, err
			}
		case <-meter.Done():
			// The stream ended (powermetrics exited, or the input
			// closed): show what it handed over, then sum up.
			return drain(sink, updates, last)
		case <-s.Resized:
			if err := sink.Resize(); err != nil {
				return time.Now(), err
			}
		case <-timeout:
			return t0.Add(o.duration), nil
		case <-s.Signals:
			return time.Now(), nil
		}
	}
}

// drain shows the windows still on their way after the stream ended, and
// returns the end of the last window (now, when there was none).
func drain(sink output.Sink, updates <-chan update, last time.Time) (time.Time, error) {
	for {
		select {
		case u := <-updates:
			if err := sink.Window(u.w, u.tot); err != nil {
				return u.w.End, err
			}
			last = u.w.End
		default:
			if last.IsZero() {
				return time.Now(), nil
			}
			return last, nil
		}
	}
}

// closeSpan ends the span at end, stops the stream and returns what was
// measured. A further signal cuts the wait for the last window short.
func closeSpan(s *cli.Streams, meter *sampler.Sampler, span *sampler.Span, end time.Time, updates chan update) sampler.Result {
	// Windows that come while the span is closed are not shown, but the
	// Sampler must not block handing them over.
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for range updates {
		}
	}()
	endCtx, stop := cli.CancelOnSignal(context.Background(), s.Signals)
	res := endMeasuring(endCtx, meter, span, end)
	stop()
	close(updates)
	<-drained
	return res
}

// streamSource names what the stream's first document says it came from.
func streamSource(meter *sampler.Sampler) wire.Source {
	hw, build := meter.Machine()
	return wire.Source{Tool: "powermetrics", HWModel: hw, OSBuild: build}
}

// startSource starts powermetrics, or reads the stream named by --from.
func startSource(ctx context.Context, s *cli.Streams, o *watchOptions) (*sampler.Sampler, error) {
	if o.from == "" {
		return startMeasuring(ctx, o.powermetricsPath(s.Getenv), o.interval, "exopower watch")
	}
	in, regular, err := s.OpenLive(o.from)
	if err != nil {
		return nil, err
	}
	if regular {
		in.Close()
		// A file is read at once: arrival times would say nothing of
		// when its windows were.
		return nil, cli.Fail(fmt.Errorf("--from %s is a recorded file, not a live stream", cli.InputName(o.from)),
			"summarise a recording with: exopower report "+o.from)
	}
	meter := sampler.Start(powermetrics.NewReader(in, time.Now), sampler.Config{Source: "powermetrics", Interval: o.interval, FromPipe: true})
	if err := meter.Ready(ctx); err != nil {
		meter.Stop()
		return nil, cli.Fail(fmt.Errorf("%s: %w", cli.InputName(o.from), err), notLiveHint(o.from, err))
	}
	return meter, nil
}

// notLiveHint says what to do about a stream that watch cannot follow.
func notLiveHint(from string, err error) string {
	var pe *sampler.PlaybackError
	switch {
	case !errors.As(err, &pe):
		return "give a stream of: " + powermetrics.CommandLine(time.Second)
	case from == "-":
		return "summarise a recording with: exopower report FILE, or exopower report - to read it from stdin"
	}
	return "summarise a recording with: exopower report " + from
}
