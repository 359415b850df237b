package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/exopower/exopower/internal/child"
	"github.com/exopower/exopower/internal/powermetrics"
)

// Exit statuses of exopower's own. Everything else is the measured
// command's: its own status, 128+N when signal N ended it, 126 when it
// could not be executed and 127 when it was not found.
const (
	// exitFailure: exopower could not do what was asked (bad usage,
	// powermetrics missing or refusing, no sample, output not written).
	// The command was not started, unless the message says otherwise.
	exitFailure = 125
)

// streams are the process's standard streams and environment, passed
// down so that tests can run exopower in-process.
type streams struct {
	In       io.Reader
	InFd     int
	Out, Err io.Writer
	// OutTTY and ErrTTY say whether Out and Err are terminals.
	OutTTY, ErrTTY bool
	Getenv         func(string) string
	Environ        func() []string
	// TermSize is the size of the terminal that Out writes to.
	TermSize func() (width, height int, err error)
	// Signals brings the signals that end exopower (SIGINT, SIGTERM,
	// SIGHUP), and Resized the terminal's SIGWINCH; nil in tests that
	// send none.
	Signals, Resized <-chan os.Signal
}

func systemStreams() *streams {
	return &streams{
		In: os.Stdin, InFd: int(os.Stdin.Fd()), Out: os.Stdout, Err: os.Stderr,
		OutTTY:   term.IsTerminal(int(os.Stdout.Fd())),
		ErrTTY:   term.IsTerminal(int(os.Stderr.Fd())),
		Getenv:   os.Getenv,
		Environ:  os.Environ,
		TermSize: func() (int, int, error) { return term.GetSize(int(os.Stdout.Fd())) },
	}
}

// statusError ends exopower with a given status: the measured command's,
// or one of exopower's own with a message and hints for the user.
type statusError struct {
	code  int
	err   error // nil: nothing to print (the command's own status)
	hints []string
}

func (e *statusError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *statusError) Unwrap() error { return e.err }

func fail(err error, hints ...string) error {
	return &statusError{code: exitFailure, err: err, hints: hints}
}

// run runs exopower with args and returns its exit status. It is the only
// place where errors turn into messages and statuses.
func run(ctx context.Context, args []string, s *streams) int {
	root := newRootCmd(ctx, s)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var oe *outputError
	if errors.As(err, &oe) && brokenPipe(oe) {
		// The reader of stdout went away (| head): end quietly, as a
		// Unix tool that SIGPIPE ended.
		return exitBrokenPipe
	}
	var se *statusError
	var ce *child.Error
	var hinted interface{ Hints() []string }
	switch {
	case errors.As(err, &se):
	case errors.As(err, &ce):
		se = &statusError{code: ce.Status, err: ce.Err, hints: ce.Hints()}
	case errors.As(err, &hinted):
		se = &statusError{code: exitFailure, err: err, hints: hinted.Hints()}
	default:
		// cobra's own errors: unknown flags, missing arguments.
		se = &statusError{code: exitFailure, err: err, hints: []string{"exopower --help shows the usage"}}
	}
	if se.err != nil {
		fmt.Fprintf(s.Err, "exopower: error: %v\n", se.err)
		for _, h := range se.hints {
			fmt.Fprintf(s.Err, "exopower: hint: %s\n", h)
		}
	}
	return se.code
}

func newRootCmd(ctx context.Context, s *streams) *cobra.Command {
	root := &cobra.Command{
		Use:   "exopower",
		Short: "Measure the energy of an Apple Silicon Mac's SoC (CPU, GPU, ANE) from powermetrics",
		Long: `exopower runs Apple's powermetrics, places its samples on one timeline and
integrates them: it reports energy (joules) and time-weighted average power
(watts) of the SoC's CPU, GPU and ANE. That is not the display, memory or the
whole machine at the wall.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(s.Out)
	root.SetErr(s.Err)
	root.SetContext(ctx)
	root.AddCommand(newRunCmd(s), newBenchCmd(s), newWatchCmd(s), newReportCmd(s), newServeCmd(s), newDoctorCmd(s), newPlotCmd(s), newVersionCmd(s), newDebugArgsCmd(s), newGenManCmd())
	setVersion(root, readVersion())
	addCompletion(root)
	return root
}

// commonOptions are the flags every measuring command takes.
type commonOptions struct {
	interval     time.Duration
	powermetrics string
	json         bool
}

func (o *commonOptions) addFlags(c *cobra.Command, defaultInterval time.Duration) {
	c.Flags().DurationVarP(&o.interval, "interval", "i", defaultInterval, "sample interval, such as 100ms or 1s")
	addPowermetricsFlag(c, &o.powermetrics)
	addJSONFlag(c, &o.json)
}

func addPowermetricsFlag(c *cobra.Command, dst *string) {
	c.Flags().StringVar(dst, "powermetrics", "", "powermetrics binary (default $EXOPOWER_POWERMETRICS, else "+powermetrics.DefaultPath+")")
}

func addJSONFlag(c *cobra.Command, dst *bool) {
	c.Flags().BoolVar(dst, "json", false, "write JSON to stdout")
}

func (o *commonOptions) powermetricsPath(getenv func(string) string) string {
	return powermetricsPath(o.powermetrics, getenv)
}

// powermetricsPath is the --powermetrics flag, else $EXOPOWER_POWERMETRICS,
// else powermetrics's place on macOS.
func powermetricsPath(flag string, getenv func(string) string) string {
	if flag != "" {
		return flag
	}
	if p := getenv("EXOPOWER_POWERMETRICS"); p != "" {
		return p
	}
	return powermetrics.DefaultPath
}

// The range of --interval. powermetrics samples no faster than every
// 10 ms and takes whole milliseconds; an hour is already far longer than
// any window worth reading live, and the bound keeps every sum of
// intervals (the waits for a first and a last window) far from overflow.
const (
	minInterval = 10 * time.Millisecond
	maxInterval = time.Hour
)

func (o *commonOptions) validate() error {
	if o.interval < minInterval || o.interval > maxInterval {
		return fail(fmt.Errorf("--interval %v is out of range: it takes %v to %v", o.interval, minInterval, maxInterval),
			"100ms suits most commands, 1s a live view")
	}
	if o.interval%time.Millisecond != 0 {
		return fail(fmt.Errorf("--interval %v is not a whole number of milliseconds", o.interval), "powermetrics takes whole milliseconds, such as 100ms")
	}
	return nil
}

// newDebugArgsCmd prints the powermetrics arguments exopower uses, so that
// a recording made by hand (scripts/record-fixture.sh) matches them.
func newDebugArgsCmd(s *streams) *cobra.Command {
	var o commonOptions
	c := &cobra.Command{
		Use:    "debug-args",
		Short:  "Print the powermetrics arguments exopower uses",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			fmt.Fprintln(s.Out, strings.Join(powermetrics.Args(o.interval), " "))
			return nil
		},
	}
	o.addFlags(c, 100*time.Millisecond)
	return c
}
