package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/exopower/exopower/internal/bench"
	"github.com/exopower/exopower/internal/child"
	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/source"
)

type benchOptions struct {
	commonOptions
	runs, warmup                      int
	prepare, setup, conclude, cleanup string
	shell                             string
	noShell                           bool
	ignoreFailure, showOutput         bool
	baseline, cooldown                time.Duration
	reference                         string
	exportJSON, exportCSV, exportMD   string
	commands                          []string
	params                            parameterLists
	// units is --units, the units of work of every run; unitsRE is
	// --units-from compiled, which reads them from each run's output.
	units             float64
	unitsSet, unitSet bool
	unit, unitsFrom   string
	unitsRE           *regexp.Regexp
	nodes             nodeOptions
}

func newBenchCmd(s *cli.Streams) *cobra.Command {
	var o benchOptions
	c := &cobra.Command{
		Use:   "bench [flags] COMMAND...",
		Short: "Measure the energy of commands over repeated runs, as hyperfine times them",
		Long: `Run each COMMAND (a shell string, as hyperfine takes it) --runs times and
measure each run's SoC energy over one powermetrics stream: energy, net energy
(less the idle Mac's power, measured for --baseline before the first run and
after the last), average power and duration, as mean ± σ, median, min and max,
and each command's energy relative to the least one's (or --reference's).
The commands' output goes to /dev/null unless --show-output.

The flags follow hyperfine's where they mean the same, but for -i: here it is
the sample interval, as in every exopower command; hyperfine's -i
(--ignore-failure) is spelt out.`,
		Example: `  sudo exopower bench 'gzip -k big.tar' 'zstd -k big.tar'
  sudo exopower bench -r 5 --baseline 10s --export-markdown energy.md './build-a' './build-b'`,
		// Parsed in RunE: -L takes two words.
		DisableFlagParsing: true,
		RunE: func(c *cobra.Command, args []string) error {
			if help, err := parseBenchFlags(c, args, &o); help || err != nil {
				if help {
					return c.Help()
				}
				return err
			}
			return runBench(c.Context(), s, &o)
		},
	}
	o.addFlags(c, 100*time.Millisecond)
	f := c.Flags()
	f.IntVarP(&o.runs, "runs", "r", 10, "measured runs of each command")
	f.IntVarP(&o.warmup, "warmup", "w", 0, "runs of each command before the measured ones, not measured")
	f.StringVarP(&o.prepare, "prepare", "p", "", "run `CMD` before each run, not measured")
	f.StringVar(&o.setup, "setup", "", "run `CMD` once before each command's runs, not measured")
	f.StringVar(&o.conclude, "conclude", "", "run `CMD` after each run, not measured")
	f.StringVar(&o.cleanup, "cleanup", "", "run `CMD` once after each command's runs, not measured")
	f.StringVarP(&o.shell, "shell", "S", "sh", "shell that runs the commands with -c, or none to split them into words")
	f.BoolVarP(&o.noShell, "no-shell", "N", false, "split each command into words and run it without a shell (--shell=none)")
	f.BoolVar(&o.ignoreFailure, "ignore-failure", false, "go on when a command fails (hyperfine's -i)")
	f.BoolVar(&o.showOutput, "show-output", false, "let the commands' output through (to stderr with --json)")
	f.DurationVar(&o.baseline, "baseline", 5*time.Second, "measure the idle Mac this long before the first run and after the last; 0: no baseline")
	f.DurationVar(&o.cooldown, "cooldown", 0, "wait this long between runs, not measured")
	f.StringVar(&o.reference, "reference", "", "compare the others with `CMD`, measured first (default: the command with the least energy)")
	f.StringVar(&o.exportJSON, "export-json", "", "write the results as JSON to `FILE`")
	f.StringVar(&o.exportCSV, "export-csv", "", "write a CSV row per command to `FILE`")
	f.StringVar(&o.exportMD, "export-markdown", "", "write a Markdown table to `FILE`")
	o.nodes.addFlags(c)
	f.VarP(&o.params, "parameter-list", "L", "measure each command once per value, `NAME VALUES` (comma-separated), with each {NAME} in it and in the hooks replaced (repeat for every combination)")
	f.Float64Var(&o.units, "units", 0, "each run does `N` units of work: report the energy per unit and units per joule")
	f.StringVar(&o.unit, "unit", "unit", "the `NAME` of the unit of work of --units or --units-from, such as token")
	f.StringVar(&o.unitsFrom, "units-from", "", "read each run's units of work from its output: the first group of `REGEX`")
	return c
}

// validate refuses, before anything runs, options that cannot work.
func (o *benchOptions) validate() error {
	usage := "usage: exopower bench [flags] COMMAND..."
	switch {
	case len(o.commands) == 0 && o.reference == "":
		return cli.Fail(errors.New("bench: no command to measure"), usage)
	case o.runs < 1:
		return cli.Fail(fmt.Errorf("--runs %d: it takes at least 1", o.runs), "10 runs, the default, give a fair mean and spread")
	case o.warmup < 0:
		return cli.Fail(fmt.Errorf("--warmup %d: it takes 0 or more", o.warmup))
	case o.baseline < 0:
		return cli.Fail(fmt.Errorf("--baseline %v: it takes 0 (none) or a duration", o.baseline), "5s, the default, suits most benches")
	case o.cooldown < 0:
		return cli.Fail(fmt.Errorf("--cooldown %v: it takes 0 or a duration", o.cooldown))
	}
	if o.noShell {
		o.shell = "none"
	}
	for _, c := range o.commands {
		if strings.TrimSpace(c) == "" || o.reference != "" && strings.TrimSpace(o.reference) == "" {
			return cli.Fail(errors.New("bench: an empty command"), usage)
		}
	}
	if err := o.validateUnits(); err != nil {
		return err
	}
	return o.commonOptions.validate()
}

// argv is the command line that runs the shell string c.
func (o *benchOptions) argv(c string) []string {
	if o.shell == "none" {
		return strings.Fields(c)
	}
	return []string{o.shell, "-c", c}
}

// config is what the runner runs and how, as the user id runs it.
func (o *benchOptions) config(s *cli.Streams, id child.Identity) bench.Config {
	cfg := bench.Config{
		Jobs: bench.Jobs(o.commands, o.reference, o.params, bench.Hooks{Setup: o.setup, Prepare: o.prepare, Conclude: o.conclude, Cleanup: o.cleanup}),
		Runs: o.runs, Warmup: o.warmup, Cooldown: o.cooldown, Baseline: o.baseline, Interval: o.interval,
		IgnoreFailure: o.ignoreFailure, Argv: o.argv, Identity: id,
		UnitsFrom: o.unitsRE, Unit: o.unitName(), Signals: s.Signals, Messages: s.Err,
	}
	if o.unitsSet {
		cfg.Units = &o.units
	}
	if o.showOutput {
		cfg.Stdout, cfg.Stderr = s.Out, s.Err
		if o.json {
			cfg.Stdout = s.Err
		}
	}
	var w io.Writer
	if s.ErrTTY && !o.showOutput {
		w = s.Err
	}
	cfg.Progress = bench.NewProgress(w, len(cfg.Jobs)*o.runs, o.baseline)
	return cfg
}

func runBench(ctx context.Context, s *cli.Streams, o *benchOptions) error {
	if err := o.validate(); err != nil {
		return err
	}
	id, err := child.Identify(false, os.Geteuid(), s.Getenv, s.Environ())
	if err != nil {
		return err
	}
	for _, e := range [][2]string{{"--export-json", o.exportJSON}, {"--export-csv", o.exportCSV}, {"--export-markdown", o.exportMD}} {
		if err := output.CheckPath(e[0], e[1], id.Cred); err != nil {
			return err
		}
	}
	if id.Note != "" {
		fmt.Fprintf(s.Err, "exopower: note: %s\n", id.Note)
	}
	cfg := o.config(s, id)
	if err := cfg.Look(s.Getenv("PATH")); err != nil {
		return err
	}
	meter, err := o.meter(ctx, s)
	if err != nil {
		return err
	}
	r := bench.NewRunner(cfg, meter)
	rep := r.Measure(ctx)
	if err := o.deliver(s, rep, id); err != nil {
		return err
	}
	return r.Err()
}

// meter starts powermetrics, or reaches the nodes of --node, before the
// first run: a node that does not answer is known then, not in the
// middle of the runs.
func (o *benchOptions) meter(ctx context.Context, s *cli.Streams) (bench.Meter, error) {
	opts := o.sourceOptions(s.Getenv, "exopower bench "+output.ShellQuote(o.commands))
	const nothing = "interrupted before the first run; nothing was measured"
	if o.nodes.Given() {
		members, skipped, err := connect(ctx, s, o.nodes.setup(s, opts), nothing)
		if err != nil {
			return nil, err
		}
		return bench.NewNodesMeter(members, skipped, o.interval, source.Name), nil
	}
	startCtx, stopStart := cli.CancelOnSignal(ctx, s.Signals)
	meter, err := source.Start(startCtx, opts)
	if stopStart() && err == nil {
		meter.Stop()
		return nil, cli.Fail(errors.New(nothing))
	}
	if err != nil {
		return nil, err
	}
	return bench.NewStreamMeter(meter), nil
}

// deliver finishes the report and writes it to stdout and the exports.
func (o *benchOptions) deliver(s *cli.Streams, rep *bench.Report, id child.Identity) error {
	ref := -1
	if o.reference != "" {
		ref = 0
	}
	rep.Finish(ref)
	var err error
	if o.json {
		err = cli.Wrote("stdout", output.WriteJSON(s.Out, rep))
	} else {
		err = cli.Wrote("stdout", bench.WriteText(s.Out, rep, output.NewStyles(s.Out, s.OutTTY, s.Getenv)))
	}
	for _, e := range []struct {
		path  string
		write func(io.Writer, *bench.Report) error
	}{{o.exportJSON, func(w io.Writer, r *bench.Report) error { return output.WriteJSON(w, r) }},
		{o.exportCSV, bench.WriteCSV}, {o.exportMD, bench.WriteMarkdown}} {
		if e.path == "" {
			continue
		}
		werr := output.WriteFile(e.path, func(w io.Writer) error { return e.write(w, rep) }, id.Cred)
		err = errors.Join(err, cli.Wrote(e.path, werr))
	}
	if err != nil && !cli.BrokenPipe(err) {
		return cli.Fail(err)
	}
	return nil
}
