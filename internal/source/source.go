// Package source starts the stream that a command measures and puts a
// sampler over it: powermetrics launched (and, for serve, started again
// when it dies), a powermetrics stream read from a pipe, or a recording
// read at once. It is the one package, beside the fake, that knows which
// source exopower reads; the sampler and everything above it measure
// whatever a source hands them (power.Sample).
package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/powermetrics"
	"github.com/exopower/exopower/internal/sampler"
)

// Name names the source in messages and in JSON (source.tool).
const Name = "powermetrics"

// DefaultPath is where macOS keeps powermetrics.
const DefaultPath = powermetrics.DefaultPath

// Options say how to start the source.
type Options struct {
	// Path is the powermetrics binary.
	Path string
	// Interval is the sample interval.
	Interval time.Duration
	// Rerun is the exopower command line the user typed, for the hint
	// that runs it again under sudo.
	Rerun string
	// Grace is added to one interval when a span waits for the window
	// that covers its end (sampler.Config.Grace).
	Grace time.Duration
}

func (o Options) launch() powermetrics.LaunchOptions {
	return powermetrics.LaunchOptions{Options: powermetrics.Options{Path: o.Path, Interval: o.Interval}, Rerun: o.Rerun}
}

func (o Options) config() sampler.Config {
	return sampler.Config{Source: Name, Interval: o.Interval, Grace: o.Grace}
}

// Start launches powermetrics, which waits for its first sample so that
// nothing is started before measurement is known to work, and returns a
// Sampler over it with that sample on its ledger.
func Start(ctx context.Context, o Options) (*sampler.Sampler, error) {
	p, err := powermetrics.Launch(ctx, o.launch())
	if err != nil {
		return nil, err
	}
	meter := sampler.Start(p, o.config())
	// The first sample is on the ledger before anything else asks: a span
	// begun now waits for the sample it asks for, not for that one.
	if err := meter.Ready(ctx); err != nil {
		meter.Stop()
		return nil, err
	}
	return meter, nil
}

// Restarter says how often a supervised source was started again, and
// the last failure to start it.
type Restarter interface {
	Restarts() (int, error)
}

// Supervised is Start for a stream that outlives its powermetrics:
// powermetrics is started again whenever it dies, and the time between
// is neither measured nor bridged.
func Supervised(ctx context.Context, o Options) (*sampler.Sampler, Restarter, error) {
	opts := o.launch()
	p, err := powermetrics.Launch(ctx, opts)
	if err != nil {
		return nil, nil, err
	}
	sup := powermetrics.Supervise(p, opts)
	return sampler.Start(sup, o.config()), sup, nil
}

// Pipe follows a powermetrics -f plist stream that another program
// writes into r, such as sudo powermetrics ... | exopower watch --from -.
// A recording played into the pipe at once is refused: arrival times
// would say nothing of when its windows were. name names r in messages.
func Pipe(ctx context.Context, r io.Reader, name string, interval time.Duration) (*sampler.Sampler, error) {
	cfg := Options{Interval: interval}.config()
	cfg.FromPipe = true
	meter := sampler.Start(powermetrics.NewReader(r, time.Now), cfg)
	if err := meter.Ready(ctx); err != nil {
		meter.Stop()
		return nil, cli.Fail(fmt.Errorf("%s: %w", cli.InputName(name), err), notLiveHint(name, err))
	}
	return meter, nil
}

// notLiveHint says what to do about a stream that cannot be followed.
func notLiveHint(from string, err error) string {
	var pe *sampler.PlaybackError
	switch {
	case !errors.As(err, &pe):
		return "give a stream of: " + CommandLine(time.Second)
	case from == "-":
		return "summarise a recording with: exopower report FILE, or exopower report - to read it from stdin"
	}
	return "summarise a recording with: exopower report " + from
}

// Recording measures a recorded powermetrics -f plist stream, read from
// r, from its first window to its last, and hands every window to
// onWindow (nil: none). A recording has no arrival times: its windows
// follow each other by their lengths.
func Recording(r io.Reader, onWindow func(sampler.Window, sampler.Totals)) (sampler.Result, error) {
	return sampler.RecordingWindows(powermetrics.NewRecording(r), Name, onWindow)
}

// RecordingError is err, a recording named name that could not be
// measured, with the hint that says how to record one.
func RecordingError(name string, err error) error {
	err = fmt.Errorf("%s: %w", cli.InputName(name), err)
	if errors.Is(err, powermetrics.ErrIntel) {
		return cli.Fail(err)
	}
	return cli.Fail(err, "record a stream with: "+CommandLine(100*time.Millisecond, "-n", "100", "-o", "trace.plist"))
}

// CommandLine is the powermetrics command line that gives the stream
// exopower reads, with extra arguments, for hints.
func CommandLine(interval time.Duration, extra ...string) string {
	return powermetrics.CommandLine(interval, extra...)
}

// Reasons are every reason the source refuses a reading for, in a word.
func Reasons() []string { return powermetrics.Reasons() }

// Args are the arguments exopower gives powermetrics at interval.
func Args(interval time.Duration) []string { return powermetrics.Args(interval) }
