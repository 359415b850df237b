package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/cli/usage"
	"github.com/exopower/exopower/internal/power"
	"github.com/exopower/exopower/internal/source"
)

// run runs exopower with args and returns its exit status: cli.Report
// turns what the command returned into a message and a status.
func run(ctx context.Context, args []string, s *cli.Streams) int {
	root := newRootCmd(ctx, s)
	root.SetArgs(args)
	if c, rest, err := root.Find(args); err != nil && c == root && !completing(args) {
		// A first word that names no command: cobra's own message
		// spreads its suggestion over lines of its own.
		return cli.Report(s.Err, usage.UnknownCommand(root, firstWord(rest)))
	}
	return cli.Report(s.Err, root.ExecuteContext(ctx))
}

// completing reports whether args ask for the shell's completions:
// cobra adds the command that answers them only once it runs.
func completing(args []string) bool {
	return len(args) > 0 && (args[0] == cobra.ShellCompRequestCmd || args[0] == cobra.ShellCompNoDescRequestCmd)
}

// firstWord is the first of args that is not a flag: the root takes
// flags without values only (--help, --version).
func firstWord(args []string) string {
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			return a
		}
	}
	return ""
}

func newRootCmd(ctx context.Context, s *cli.Streams) *cobra.Command {
	root := &cobra.Command{
		Use:   "exopower",
		Short: "Measure the energy of an Apple Silicon Mac: its SoC, its memory and the whole Mac",
		Long: `exopower reads the power of an Apple Silicon Mac, places its samples on one
timeline and integrates them: it reports energy (joules) and time-weighted
average power (watts). As root it runs Apple's powermetrics, which measures the
SoC's CPU, GPU and ANE; without root (or with --source ioreport) it reads
IOReport's energy counters and the SMC in process, which add the memory's
(DRAM) and the whole Mac's power (system), as its SMC reports it, not the wall's.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(s.Out)
	root.SetErr(s.Err)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usage.FlagFail(c, err) })
	root.SetContext(ctx)
	root.AddCommand(newRunCmd(s), newBenchCmd(s), newCompareCmd(s), newLLMCmd(s), newWatchCmd(s), newReportCmd(s), newRecordCmd(s), newServeCmd(s), newDoctorCmd(s), newCalibrateCmd(s), newPlotCmd(s), newTopCmd(s), newVersionCmd(s), newDebugArgsCmd(s))
	if genManCmd != nil {
		root.AddCommand(genManCmd())
	}
	setVersion(root, readVersion())
	addCompletion(root)
	return root
}

// genManCmd makes the hidden gen-man command, where the build has it
// (man.go, -tags genman); nil in the binary users run.
var genManCmd func() *cobra.Command

// commonOptions are the flags every measuring command takes.
type commonOptions struct {
	interval     time.Duration
	source       string
	powermetrics string
	json         bool
}

func (o *commonOptions) addFlags(c *cobra.Command, defaultInterval time.Duration) {
	c.Flags().DurationVarP(&o.interval, "interval", "i", defaultInterval, "sample interval, such as 100ms or 1s")
	c.Flags().StringVar(&o.source, "source", source.Auto, "what to read: powermetrics (as root: the SoC), ioreport (no root: the SoC, memory and the whole system), or auto: powermetrics as root, else ioreport")
	addPowermetricsFlag(c, &o.powermetrics)
	addJSONFlag(c, &o.json)
}

// openIOReport opens IOReport and the SMC; nil is the real ones. The
// tests give a fake, which lets --source ioreport run on Linux.
var openIOReport source.OpenIOReport

func addPowermetricsFlag(c *cobra.Command, dst *string) {
	c.Flags().StringVar(dst, "powermetrics", "", "powermetrics binary (default $EXOPOWER_POWERMETRICS, else "+source.DefaultPath+")")
}

func addJSONFlag(c *cobra.Command, dst *bool) {
	c.Flags().BoolVar(dst, "json", false, "write JSON to stdout")
}

// sourceOptions says how to start the source for the exopower command
// line rerun, for hints.
func (o *commonOptions) sourceOptions(getenv func(string) string, rerun string) source.Options {
	return source.Options{Kind: o.source, IOReport: openIOReport, EUID: os.Geteuid(),
		Path: powermetricsPath(o.powermetrics, getenv), Interval: o.interval, Rerun: rerun}
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
	return source.DefaultPath
}

func (o *commonOptions) validate() error {
	if o.interval < power.MinInterval || o.interval > power.MaxInterval {
		return cli.Fail(fmt.Errorf("--interval %v is out of range: it takes %v to %v", o.interval, power.MinInterval, power.MaxInterval),
			"100ms suits most commands, 1s a live view")
	}
	if o.interval%time.Millisecond != 0 {
		return cli.Fail(fmt.Errorf("--interval %v is not a whole number of milliseconds", o.interval), "powermetrics takes whole milliseconds, such as 100ms")
	}
	return source.Options{Kind: o.source, IOReport: openIOReport}.Check()
}

// newDebugArgsCmd prints the powermetrics arguments exopower uses, so that
// a recording made by hand (scripts/record-fixture.sh) matches them.
func newDebugArgsCmd(s *cli.Streams) *cobra.Command {
	var o commonOptions
	c := &cobra.Command{
		Use:    "debug-args",
		Short:  "Print the powermetrics arguments exopower uses",
		Hidden: true,
		Args:   usage.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			fmt.Fprintln(s.Out, strings.Join(source.Args(o.interval), " "))
			return nil
		},
	}
	o.addFlags(c, 100*time.Millisecond)
	return c
}
