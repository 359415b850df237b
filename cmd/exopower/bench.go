package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/exopower/exopower/internal/attrib"
	"github.com/exopower/exopower/internal/bench"
	"github.com/exopower/exopower/internal/child"
	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/cli/usage"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/sampler"
	"github.com/exopower/exopower/internal/source"
	"github.com/exopower/exopower/internal/wall"
)

// benchOptions are bench's flags: hyperfine's, whose meaning
// bench.Options holds, and those of every measuring command.
type benchOptions struct {
	commonOptions
	bench.Options
	nodes     nodeOptions
	attribute bool
	wall      wallOptions
	cmp       benchCompare
	cost      costOptions
	others    int // the processes that share a run's coalition besides it: set by meter
	// mac is this Mac's stream as it began, which names the Mac and
	// says whether it reads the system's power: set by meter.
	mac sampler.StreamTotals
}

func newBenchCmd(s *cli.Streams) *cobra.Command { return newBenchCmdRun(s, runBench) }

// newBenchCmdRun is bench's command with run in runBench's place: tests
// parse a command line as bench does, and give the runs' numbers
// themselves instead of measuring them (as hyperfine's --debug-mode).
func newBenchCmdRun(s *cli.Streams, run func(context.Context, *cli.Streams, *benchOptions) error) *cobra.Command {
	var o benchOptions
	c := &cobra.Command{
		Use:   "bench [flags] COMMAND...",
		Short: "Measure the energy of commands over repeated runs, as hyperfine times them",
		Long: `Run each COMMAND (a shell string, as hyperfine takes it) many times and
measure each run's SoC energy over one powermetrics stream: energy, net energy
(less the idle Mac's power, measured for --baseline before the first run and
after the last), average power and duration, as mean ± σ, median, min and max,
and each command's energy relative to the least one's (or --reference's).
Each command runs at least --min-runs times (10), and as many more as fill
--min-benchmarking-time (3 s) at the pace of its first run, at most
--max-runs; --runs gives the count. The commands' output goes to /dev/null
unless --show-output or --output.

The flags mean what hyperfine's mean, but for -i: here it is the sample
interval, as in every exopower command; hyperfine's -i (--ignore-failure) is
spelt out. hyperfine's flags that exopower cannot honour are refused.

--compare SAVED.json compares the results with a saved export, as exopower
compare does, after the summary: the exit status is the bench's own where it
failed, else 1 where a command's energy regressed.`,
		Example: `  sudo exopower bench 'gzip -k big.tar' 'zstd -k big.tar'
  sudo exopower bench -r 5 --baseline 10s --export-markdown energy.md './build-a' './build-b'
  sudo exopower bench -L threads 1,4,8 -p 'make clean' 'make -j {threads}'
  exopower bench --source ioreport --compare main.json --export-json pr.json -n build 'make -j8'`,
		// Parsed in RunE: -L takes two words and -P three.
		DisableFlagParsing: true,
		RunE: func(c *cobra.Command, args []string) error {
			if help, err := parseBenchFlags(c, args, &o); help || err != nil {
				if help {
					return c.Help()
				}
				return err
			}
			return run(c.Context(), s, &o)
		},
	}
	o.addFlags(c)
	return c
}

// addFlags gives c bench's flags, hyperfine's among them.
func (o *benchOptions) addFlags(c *cobra.Command) {
	o.commonOptions.addFlags(c, 100*time.Millisecond)
	f := c.Flags()
	f.Lookup("interval").Usage += " (hyperfine's -i is --ignore-failure)"
	f.IntVarP(&o.Runs, "runs", "r", 0, "make exactly `NUM` measured runs of each command (default: as --min-runs, --max-runs and --min-benchmarking-time decide)")
	f.IntVarP(&o.MinRuns, "min-runs", "m", 0, "make at least `NUM` measured runs of each command (default 10, or --max-runs when fewer)")
	f.IntVarP(&o.MaxRuns, "max-runs", "M", 0, "make at most `NUM` measured runs of each command (default: no limit)")
	f.Float64Var(&o.MinTime, "min-benchmarking-time", 3, "make as many runs as fill `SECS` at the pace of each command's first run (its hooks and the meter's waits at its edges included), within --min-runs and --max-runs")
	f.IntVarP(&o.Warmup, "warmup", "w", 0, "`NUM` runs of each command before the measured ones, not measured")
	f.StringArrayVarP(&o.Prepare, "prepare", "p", nil, "run `CMD` before each run, not measured: once for all commands, or once for each (in the order they are measured, --reference first)")
	f.StringVarP(&o.Setup, "setup", "s", "", "run `CMD` once before each command's runs, not measured")
	f.StringArrayVarP(&o.Conclude, "conclude", "C", nil, "run `CMD` after each run, not measured: once for all commands, or once for each")
	f.StringVarP(&o.Cleanup, "cleanup", "c", "", "run `CMD` once after each command's runs, not measured")
	f.StringVarP(&o.Shell, "shell", "S", "sh", "run the commands with `SHELL` -c: a program, a command line such as \"bash --norc\", default (sh), or none to split them into words as a shell would and run them without one")
	f.BoolVarP(&o.NoShell, "no-shell", "N", false, "run the commands without a shell, each split into its words: --shell=none")
	f.StringVar(&o.IgnoreFailure, "ignore-failure", "", "measure the runs that fail all the same: with no `CODES` (or all-non-zero) any status, else those of the comma-separated list, such as --ignore-failure=1,2 (hyperfine's -i)")
	f.Lookup("ignore-failure").NoOptDefVal = "all-non-zero"
	f.BoolVar(&o.attribute, "attribute", false, "also measure each run's own processes (exopower's own, not hyperfine's): their CPU energy as the kernel counts it, their share of the GPU's, and the rest of the Mac's (macOS 13 or later)")
	f.BoolVar(&o.ShowOutput, "show-output", false, "let the commands' output through (to stderr with --json): --output=inherit")
	f.StringArrayVar(&o.Outputs, "output", nil, "where the commands' output goes, `WHERE`: null (the default), pipe (read and thrown away), inherit (as --show-output) or a FILE (stdout to it, made anew for every command, hooks too; ./name for a name alone); once for all commands, or once for each")
	f.StringVar(&o.Input, "input", "null", "the commands' standard input, `WHERE`: null or a FILE, read from its start by every command")
	f.Var(o.Baseline.Auto(), "baseline", "how long to measure the idle Mac before the first run and after the last: auto (as long as the runs' spread needs, at most 5s each, and in the latter half of each --cooldown), or exactly D each; 0: no baseline")
	f.DurationVar(&o.Cooldown, "cooldown", 0, "wait this long between runs, not measured (exopower's own)")
	f.StringVar(&o.Reference, "reference", "", "compare the others with `CMD`, measured first (default: the command with the least energy)")
	f.StringVar(&o.ReferenceName, "reference-name", "", "the `NAME` of --reference's command in the output and the exports")
	f.StringArrayVarP(&o.Names, "command-name", "n", nil, "the `NAME` of a command in the output and the exports: once for each command in order, or with parameters once for all ({NAME} replaced) or once for each benchmark")
	f.StringVar(&o.Style, "style", "auto", "the output's `TYPE`: auto, basic (no colour, no progress line), full (colour and progress), nocolor (progress, no colour), color (colour, no progress) or none (nothing but --json's JSON and the exports)")
	f.StringVar(&o.Sort, "sort", bench.SortAuto, "the order of the comparison and the tables, `METHOD`: auto (the comparison by mean energy, the tables as the commands were given), command (both as given), mean-energy or hyperfine's mean-time (both by mean energy)")
	f.StringVarP(&o.TimeUnit, "time-unit", "u", "", "show times in `UNIT`: microsecond, millisecond or second (default: by the first command's mean); JSON and CSV are in seconds")
	f.StringVar(&o.ExportJSON, "export-json", "", "write the results as JSON to `FILE` (- is stdout)")
	f.StringVar(&o.ExportCSV, "export-csv", "", "write a CSV row per command to `FILE` (- is stdout)")
	f.StringVar(&o.ExportMarkdown, "export-markdown", "", "write a Markdown table to `FILE` (- is stdout)")
	f.StringVar(&o.ExportAsciiDoc, "export-asciidoc", "", "write an AsciiDoc table to `FILE` (- is stdout)")
	f.StringVar(&o.ExportOrgMode, "export-orgmode", "", "write an Emacs Org mode table to `FILE` (- is stdout)")
	o.nodes.addFlags(c)
	o.wall.addFlags(c)
	o.cmp.addFlags(f)
	o.cost.addFlags(c)
	f.VarP(&o.Params, "parameter-list", "L", "measure each command once per value, `NAME VALUES` (comma-separated, \\, for a comma in one), with each {NAME} in it and in the hooks replaced (repeat for every combination)")
	f.VarP(&o.Scan, "parameter-scan", "P", "measure each command once per number from MIN to MAX, `NAME MIN MAX`, with each {NAME} replaced")
	f.StringVarP(&o.Step, "parameter-step-size", "D", "", "-P's step, `DELTA` (default 1; needed for decimals)")
	f.Float64Var(&o.Units, "units", 0, "each run does `N` units of work: report the energy per unit and units per joule")
	f.StringVar(&o.Unit, "unit", "unit", "the `NAME` of the unit of work of --units or --units-from, such as token")
	f.StringVar(&o.UnitsFrom, "units-from", "", "read each run's units of work from its output: the first group of `REGEX`")
	for _, r := range bench.Refused {
		f.BoolP(r.Long, r.Short, false, r.Why)
		f.MarkHidden(r.Long)
	}
}

// parseBenchFlags parses bench's arguments itself (cobra's parsing is off,
// for -L's two words and -P's three) into o; help is true for --help.
func parseBenchFlags(c *cobra.Command, args []string, o *benchOptions) (help bool, err error) {
	args, err = bench.JoinMultiWordFlags(args)
	if err != nil {
		return false, cli.Fail(err, "usage: exopower bench [flags] COMMAND...")
	}
	if err := c.Flags().Parse(args); err != nil {
		var hints []string
		if strings.Contains(err.Error(), "'i' in -i") || strings.Contains(err.Error(), "-i, --interval") {
			hints = append(hints, "here -i is the sample interval, as in every exopower command; hyperfine's -i is --ignore-failure")
		}
		return false, usage.FlagFail(c, bench.FlagError(err), hints...)
	}
	if help, _ := c.Flags().GetBool("help"); help {
		return true, nil
	}
	given := map[string]bool{}
	c.Flags().Visit(func(f *pflag.Flag) { given[f.Name] = true })
	return false, o.Parsed(given, c.Flags().Args())
}

// validate refuses, before anything runs, options that cannot work, and
// makes the jobs.
func (o *benchOptions) validate() error {
	o.Interval, o.JSON = o.interval, o.json
	if err := o.Options.Validate(); err != nil {
		return err
	}
	if o.attribute && o.nodes.Given() {
		return cli.Fail(attrib.ErrNodes)
	}
	if o.wall.url != "" && o.nodes.Given() {
		return errWallWithNodes("bench --node sums them")
	}
	if err := o.cmp.validate(o.Given); err != nil {
		return err
	}
	return o.commonOptions.validate()
}

func runBench(ctx context.Context, s *cli.Streams, o *benchOptions) error {
	if err := o.validate(); err != nil {
		return err
	}
	if err := o.cost.resolve(s.Getenv); err != nil {
		return err
	}
	id, err := child.Identify(false, os.Geteuid(), s.Getenv, s.Environ())
	if err != nil {
		return err
	}
	if err := o.checkFiles(s, id); err != nil {
		return err
	}
	if id.Note != "" {
		fmt.Fprintf(s.Err, "exopower: note: %s\n", id.Note)
	}
	cfg := o.Config(s, id)
	cfg.Rates, o.cmp.rates = o.cost.rates, o.cost.rates
	if err := cfg.Look(s.Getenv("PATH")); err != nil {
		return err
	}
	tree, err := attrib.Begin(o.attribute, openKernel)
	if err != nil {
		return err
	}
	defer tree.Close()
	// The plug is read before anything runs: one that cannot be read
	// stops the bench then, as it stops exopower run.
	plug, err := o.wall.start(ctx, s, id)
	if err != nil {
		return err
	}
	defer plug.Close()
	meter, err := o.meter(ctx, s)
	if err != nil {
		return err
	}
	meter, finishWall := o.atWall(meter, plug, id, &cfg)
	if tree != nil {
		cfg.Processes, cfg.Others = tree.Kernel, o.others
	}
	// Each command's block is written as soon as its runs are done, as
	// hyperfine writes each benchmark; the rest once all are.
	text := o.NewText(s)
	if text != nil {
		cfg.Finished = text.Benchmark
	}
	r := bench.NewRunner(cfg, meter)
	rep := r.Measure(ctx)
	finishWall(rep)
	if err := o.Deliver(s, rep, id, text); err != nil {
		return err
	}
	return o.cmp.finish(s, rep, o.Style, o.JSON, r.Err())
}

// atWall has each run measured at the wall by the plug of --wall, over
// meter; without one, cfg estimates each run's wall from this Mac's
// calibration, where there is one (not over the nodes, whose fits are
// their own). finish gives the report the plug, or the warning that says
// why no calibration is used.
func (o *benchOptions) atWall(meter bench.Meter, plug *wall.Session, id child.Identity, cfg *bench.Config) (bench.Meter, func(*bench.Report)) {
	if plug != nil {
		m := bench.NewWallMeter(meter, plug)
		return m, func(rep *bench.Report) { rep.Wall = m.Source() }
	}
	if o.nodes.Given() {
		return meter, func(*bench.Report) {}
	}
	var refused string
	cfg.Calibration, refused = findCalibration(id, readSerial).forMac(o.mac.HWModel, o.mac.Has.System)
	return meter, func(rep *bench.Report) {
		if refused != "" {
			rep.Warnings = append(rep.Warnings, refused)
		}
	}
}

// meter starts powermetrics, or reaches the nodes of --node, before the
// first run: a node that does not answer is known then, not in the
// middle of the runs.
func (o *benchOptions) meter(ctx context.Context, s *cli.Streams) (bench.Meter, error) {
	opts := o.sourceOptions(s.Getenv, "exopower bench "+output.ShellQuote(o.Commands))
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
	if stopStart() {
		if err == nil {
			meter.Stop()
		}
		return nil, cli.Fail(errors.New(nothing))
	}
	if err != nil {
		return nil, err
	}
	o.others, o.mac = othersOf(meter), meter.Totals()
	return bench.NewStreamMeter(meter), nil
}
