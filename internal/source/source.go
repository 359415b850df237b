// Package source chooses and starts the stream that a command measures,
// and puts a sampler over it: powermetrics launched (and, for serve,
// started again when it dies), IOReport's counters and the SMC read in
// process, a powermetrics stream read from a pipe, or a recording of
// either read at once. It is the one package, beside the fake, that
// knows which sources there are; the sampler and everything above it
// measure whatever a source hands them (power.Sample).
package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/ioreport"
	"github.com/exopower/exopower/internal/power"
	"github.com/exopower/exopower/internal/powermetrics"
	"github.com/exopower/exopower/internal/sampler"
)

// Name names powermetrics in messages and in JSON (source.tool).
const Name = "powermetrics"

// The sources a command may be told to read (--source).
const (
	// Auto reads powermetrics where exopower runs as root (as it always
	// has), else IOReport where this Mac has it, else powermetrics, which
	// then says how to give it root.
	Auto = "auto"
	// Powermetrics is Apple's powermetrics, run as a process: the SoC's
	// CPU, GPU and ANE, as root.
	Powermetrics = "powermetrics"
	// IOReport reads IOReport's energy counters and the SMC in process,
	// without root: the SoC's CPU, GPU and ANE, the memory's, and the
	// whole system's power.
	IOReport = ioreport.Name
)

// Kinds are the values --source takes.
var Kinds = []string{Auto, Powermetrics, IOReport}

// DefaultPath is where macOS keeps powermetrics.
const DefaultPath = powermetrics.DefaultPath

// Options say which source to start, and how.
type Options struct {
	// Kind is Auto, Powermetrics or IOReport ("" is Auto).
	Kind string
	// IOReport opens IOReport and the SMC: ioreport.Open when nil.
	IOReport func() (ioreport.Library, error)
	// EUID is exopower's effective user id, for Auto.
	EUID int
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

// Check refuses, as a flag, a Kind that is not one, or that this
// machine cannot have, before anything starts.
func (o Options) Check() error {
	if err := o.known(); err != nil {
		return err
	}
	if o.Kind == IOReport && o.IOReport == nil && runtime.GOOS != "darwin" {
		return cli.Fail(fmt.Errorf("--source ioreport: IOReport is macOS's, and this is %s", runtime.GOOS),
			"leave --source out, or give --source powermetrics with a stand-in for powermetrics (see the README)")
	}
	return nil
}

// known refuses a Kind that is not one.
func (o Options) known() error {
	if o.Kind == "" || slices.Contains(Kinds, o.Kind) {
		return nil
	}
	return cli.Fail(fmt.Errorf("--source %q is no source", o.Kind), "give one of "+strings.Join(Kinds, ", "))
}

// open opens IOReport, as o says.
func (o Options) open() (ioreport.Library, error) {
	if o.IOReport != nil {
		return o.IOReport()
	}
	return ioreport.Open()
}

// Start starts the source o names, and returns a Sampler over it with
// its first sample on the ledger: nothing is started before measurement
// is known to work. Auto starts powermetrics as root, else IOReport where
// it opens, else powermetrics.
func Start(ctx context.Context, o Options) (*sampler.Sampler, error) {
	if err := o.known(); err != nil {
		return nil, err
	}
	if o.Kind == IOReport || (o.Kind == "" || o.Kind == Auto) && o.EUID != 0 {
		meter, _, err := o.startIOReport(ctx)
		if err == nil || o.Kind == IOReport {
			return meter, err
		}
	}
	p, err := powermetrics.Launch(ctx, o.launch())
	if err != nil {
		return nil, err
	}
	return ready(ctx, sampler.Start(p, o.config()))
}

// startIOReport opens IOReport and the SMC and reads them at the
// interval.
func (o Options) startIOReport(ctx context.Context) (*sampler.Sampler, *ioreport.Stream, error) {
	lib, err := o.open()
	if err != nil {
		return nil, nil, cli.Fail(fmt.Errorf("IOReport: %w", err), "give --source powermetrics, as root")
	}
	stream, err := ioreport.NewStream(lib, o.Interval, nil)
	if err != nil {
		return nil, nil, cli.Fail(fmt.Errorf("IOReport: %w", err), "give --source powermetrics, as root")
	}
	meter, err := ready(ctx, sampler.Start(stream, sampler.Config{Source: IOReport, Interval: o.Interval, Grace: o.Grace, Notes: stream.Warnings()}))
	return meter, stream, err
}

// ready waits for meter's first sample.
func ready(ctx context.Context, meter *sampler.Sampler) (*sampler.Sampler, error) {
	// The first sample is on the ledger before anything else asks: a span
	// begun now waits for the sample it asks for, not for that one.
	if err := meter.Ready(ctx); err != nil {
		meter.Stop()
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			// Ended by the user (Ctrl-C), not a usage error.
			return nil, cli.Fail(errors.New("interrupted before the first reading; nothing was measured"))
		}
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
// is neither measured nor bridged. IOReport, read in process, has no
// process to die: its counters going back is its break, and its
// restart.
func Supervised(ctx context.Context, o Options) (*sampler.Sampler, Restarter, error) {
	if err := o.known(); err != nil {
		return nil, nil, err
	}
	if o.Kind == IOReport || (o.Kind == "" || o.Kind == Auto) && o.EUID != 0 {
		meter, stream, err := o.startIOReport(ctx)
		if err == nil {
			return meter, stream, nil
		}
		if o.Kind == IOReport {
			return nil, nil, err
		}
	}
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
	cfg.FromPipe, cfg.Began = true, began()
	meter := sampler.Start(powermetrics.NewReader(r, time.Now), cfg)
	if err := meter.Ready(ctx); err != nil {
		meter.Stop()
		if errors.Is(err, context.Canceled) {
			return nil, cli.Fail(fmt.Errorf("interrupted before the first document from %s; nothing was measured", cli.InputName(name)))
		}
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

// Recording measures a recording from its first window to its last, and
// hands every window to onWindow (nil: none): a powermetrics -f plist
// stream, whose windows follow each other by their lengths, or an
// IOReport recording (exopower record), whose readings say when they
// were taken. Which of the two r is comes from its first line, however
// long (ioreport.Sniff).
func Recording(r io.Reader, onWindow func(sampler.Window, sampler.Totals)) (sampler.Result, error) {
	if onWindow == nil {
		return RecordingFrom(r, nil)
	}
	return RecordingFrom(r, func(_ Origin, w sampler.Window, tot sampler.Totals) { onWindow(w, tot) })
}

// Origin names where a recording's windows come from, as its result
// names them: the source that read it, and the Mac of its first window.
type Origin struct{ Source, HWModel, OSBuild string }

// RecordingFrom is Recording that hands each window to onWindow with the
// recording's Origin, so that the window can be written out as it is
// read. A window is handed once the recording is known to hold something
// to measure: an IOReport recording with neither a rail exopower knows
// nor the SMC's power, which is refused, hands none (its windows wait
// until a reading shows one).
func RecordingFrom(r io.Reader, onWindow func(Origin, sampler.Window, sampler.Totals)) (sampler.Result, error) {
	return RecordingWithPlug(r, onWindow, nil)
}

// Plugged is what a recording holds of a metered plug (record --wall):
// the plug, and its readings on the windows' timeline. Info is nil
// where it holds none, and for a powermetrics recording.
type Plugged struct {
	Info     *ioreport.PlugInfo
	Readings []ioreport.PlugReading
}

// RecordingWithPlug is RecordingFrom that also gives, into plug when it
// is not nil, what the recording holds of a metered plug.
func RecordingWithPlug(r io.Reader, onWindow func(Origin, sampler.Window, sampler.Totals), plug *Plugged) (sampler.Result, error) {
	isIOReport, r, err := ioreport.Sniff(r)
	if err != nil {
		return sampler.Result{}, err
	}
	if !isIOReport {
		src := &firstDocument{Reader: powermetrics.NewRecording(r)}
		var hand func(sampler.Window, sampler.Totals)
		if onWindow != nil {
			hand = func(w sampler.Window, tot sampler.Totals) { onWindow(src.origin, w, tot) }
		}
		return sampler.RecordingWindows(src, Name, hand)
	}
	rec, err := ioreport.NewRecording(r)
	if err != nil {
		return sampler.Result{}, &ioRecordingError{err}
	}
	var held heldWindows
	if onWindow != nil {
		o := Origin{IOReport, rec.Header().HWModel, rec.Header().OSBuild}
		held.hand = func(w sampler.Window, tot sampler.Totals) { onWindow(o, w, tot) }
	}
	res, err := sampler.RecordingWindows(rec, IOReport, held.until(rec.Measurable))
	if err == nil {
		err = rec.Measurable()
	}
	if err != nil {
		return sampler.Result{}, &ioRecordingError{err}
	}
	res.Warnings = append(res.Warnings, rec.Warnings()...)
	if plug != nil {
		plug.Info, plug.Readings = rec.Plug()
	}
	return res, nil
}

// firstDocument is a powermetrics recording that notes the Mac its first
// document names, which the result names too.
type firstDocument struct {
	*powermetrics.Reader
	origin Origin
	seen   bool
}

func (f *firstDocument) Next() (power.Sample, error) {
	s, err := f.Reader.Next()
	if err == nil && !f.seen {
		f.origin, f.seen = Origin{Name, s.HWModel, s.OSBuild}, true
	}
	return s, err
}

// heldWindows holds a recording's windows until it is known to hold
// something to measure, and then hands them on as they come.
type heldWindows struct {
	hand       func(sampler.Window, sampler.Totals)
	measurable bool
	windows    []sampler.Window
	totals     []sampler.Totals
}

// until returns the callback that holds the windows while measurable
// fails; nil where there is nothing to hand them to.
func (h *heldWindows) until(measurable func() error) func(sampler.Window, sampler.Totals) {
	if h.hand == nil {
		return nil
	}
	return func(w sampler.Window, tot sampler.Totals) {
		if !h.measurable && measurable() != nil {
			h.windows, h.totals = append(h.windows, w), append(h.totals, tot)
			return
		}
		if !h.measurable {
			h.measurable = true
			for i := range h.windows {
				h.hand(h.windows[i], h.totals[i])
			}
			h.windows, h.totals = nil, nil
		}
		h.hand(w, tot)
	}
}

// IOReportRecording is the "type" of an IOReport recording's first line.
const IOReportRecording = ioreport.RecordingType

// SniffIOReportRecording reads enough of r to tell whether it is an
// IOReport recording (its first line, however long), and returns r whole
// again.
func SniffIOReportRecording(r io.Reader) (bool, io.Reader, error) { return ioreport.Sniff(r) }

// ioRecordingError is why an IOReport recording could not be measured:
// its hint is exopower record's, not powermetrics's.
type ioRecordingError struct{ error }

func (e *ioRecordingError) Unwrap() error { return e.error }

// RecordingError is err, a recording named name that could not be
// measured, with the hint that says how to record one.
func RecordingError(name string, err error) error {
	err = fmt.Errorf("%s: %w", cli.InputName(name), err)
	var ioErr *ioRecordingError
	switch {
	case errors.Is(err, powermetrics.ErrIntel):
		return cli.Fail(err)
	case errors.Is(err, ioreport.ErrNewerRecording):
		return cli.Fail(err, "read it with the exopower that wrote it, or a newer one (exopower version says which this is)")
	case errors.Is(err, ioreport.ErrNoRail):
		return cli.Fail(err, "record that Mac with powermetrics instead: "+CommandLine(100*time.Millisecond, "-n", "100", "-o", "trace.plist"))
	case errors.As(err, &ioErr):
		return cli.Fail(err, "record IOReport on a Mac with: exopower record -n 100 -o readings.ndjson")
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
