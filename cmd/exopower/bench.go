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
	// runs is -r; minRuns and maxRuns -m and -M; minTime
	// --min-benchmarking-time, in seconds.
	runs, minRuns, maxRuns, warmup int
	minTime                        float64
	prepare, conclude              []string
	setup, cleanup                 string
	shell                          string
	noShell                        bool
	ignoreFailure                  string
	showOutput                     bool
	outputs                        []string
	input                          string
	cooldown                       time.Duration
	baseline                       baselineFlag
	reference, referenceName       string
	names                          []string
	style, sort, timeUnit          string
	exportJSON, exportCSV          string
	exportMD, exportAsciiDoc       string
	exportOrg                      string
	commands                       []string
	params                         parameterLists
	// scan is -P's NAME MIN MAX, step -D's DELTA.
	scan parameterScan
	step string
	// units is --units, the units of work of every run; unitsRE is
	// --units-from compiled, which reads them from each run's output.
	units             float64
	unitsSet, unitSet bool
	unit, unitsFrom   string
	unitsRE           *regexp.Regexp
	nodes             nodeOptions
	// set are the flags given, by their long names.
	set map[string]bool
	// Made by validate: the shell's words (nil: none), the failures to
	// ignore, the jobs, each job's output, and where the input is.
	shellArgv []string
	failures  bench.Failures
	jobs      []bench.Job
	inputPath string
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
spelt out. hyperfine's flags that exopower cannot honour are refused.`,
		Example: `  sudo exopower bench 'gzip -k big.tar' 'zstd -k big.tar'
  sudo exopower bench -r 5 --baseline 10s --export-markdown energy.md './build-a' './build-b'
  sudo exopower bench -L threads 1,4,8 -p 'make clean' 'make -j {threads}'`,
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
	o.addFlags(c, 100*time.Millisecond)
	f := c.Flags()
	f.Lookup("interval").Usage += " (hyperfine's -i is --ignore-failure)"
	f.IntVarP(&o.runs, "runs", "r", 0, "make exactly `NUM` measured runs of each command (default: as --min-runs, --max-runs and --min-benchmarking-time decide)")
	f.IntVarP(&o.minRuns, "min-runs", "m", 0, "make at least `NUM` measured runs of each command (default 10, or --max-runs when fewer)")
	f.IntVarP(&o.maxRuns, "max-runs", "M", 0, "make at most `NUM` measured runs of each command (default: no limit)")
	f.Float64Var(&o.minTime, "min-benchmarking-time", 3, "make as many runs as fill `SECS` at the pace of each command's first run (its hooks and the meter's waits at its edges included), within --min-runs and --max-runs")
	f.IntVarP(&o.warmup, "warmup", "w", 0, "`NUM` runs of each command before the measured ones, not measured")
	f.StringArrayVarP(&o.prepare, "prepare", "p", nil, "run `CMD` before each run, not measured: once for all commands, or once for each (in the order they are measured, --reference first)")
	f.StringVarP(&o.setup, "setup", "s", "", "run `CMD` once before each command's runs, not measured")
	f.StringArrayVarP(&o.conclude, "conclude", "C", nil, "run `CMD` after each run, not measured: once for all commands, or once for each")
	f.StringVarP(&o.cleanup, "cleanup", "c", "", "run `CMD` once after each command's runs, not measured")
	f.StringVarP(&o.shell, "shell", "S", "sh", "run the commands with `SHELL` -c: a program, a command line such as \"bash --norc\", default (sh), or none to split them into words as a shell would and run them without one")
	f.BoolVarP(&o.noShell, "no-shell", "N", false, "run the commands without a shell, each split into its words: --shell=none")
	f.StringVar(&o.ignoreFailure, "ignore-failure", "", "measure the runs that fail all the same: with no `CODES` (or all-non-zero) any status, else those of the comma-separated list, such as --ignore-failure=1,2 (hyperfine's -i)")
	f.Lookup("ignore-failure").NoOptDefVal = "all-non-zero"
	f.BoolVar(&o.showOutput, "show-output", false, "let the commands' output through (to stderr with --json): --output=inherit")
	f.StringArrayVar(&o.outputs, "output", nil, "where the commands' output goes, `WHERE`: null (the default), pipe (read and thrown away), inherit (as --show-output) or a FILE (stdout to it, made anew for every command, hooks too; ./name for a name alone); once for all commands, or once for each")
	f.StringVar(&o.input, "input", "null", "the commands' standard input, `WHERE`: null or a FILE, read from its start by every command")
	f.Var(o.baseline.auto5s(), "baseline", "how long to measure the idle Mac before the first run and after the last: auto (as long as the runs' spread needs, at most 5s each, and in the latter half of each --cooldown), or exactly D each; 0: no baseline")
	f.DurationVar(&o.cooldown, "cooldown", 0, "wait this long between runs, not measured (exopower's own)")
	f.StringVar(&o.reference, "reference", "", "compare the others with `CMD`, measured first (default: the command with the least energy)")
	f.StringVar(&o.referenceName, "reference-name", "", "the `NAME` of --reference's command in the output and the exports")
	f.StringArrayVarP(&o.names, "command-name", "n", nil, "the `NAME` of a command in the output and the exports: once for each command in order, or with parameters once for all ({NAME} replaced) or once for each benchmark")
	f.StringVar(&o.style, "style", "auto", "the output's `TYPE`: auto, basic (no colour, no progress line), full (colour and progress), nocolor (progress, no colour), color (colour, no progress) or none (nothing but --json's JSON and the exports)")
	f.StringVar(&o.sort, "sort", bench.SortAuto, "the order of the comparison and the tables, `METHOD`: auto (the comparison by mean energy, the tables as the commands were given), command (both as given), mean-energy or hyperfine's mean-time (both by mean energy)")
	f.StringVarP(&o.timeUnit, "time-unit", "u", "", "show times in `UNIT`: microsecond, millisecond or second (default: by the first command's mean); JSON and CSV are in seconds")
	f.StringVar(&o.exportJSON, "export-json", "", "write the results as JSON to `FILE` (- is stdout)")
	f.StringVar(&o.exportCSV, "export-csv", "", "write a CSV row per command to `FILE` (- is stdout)")
	f.StringVar(&o.exportMD, "export-markdown", "", "write a Markdown table to `FILE` (- is stdout)")
	f.StringVar(&o.exportAsciiDoc, "export-asciidoc", "", "write an AsciiDoc table to `FILE` (- is stdout)")
	f.StringVar(&o.exportOrg, "export-orgmode", "", "write an Emacs Org mode table to `FILE` (- is stdout)")
	o.nodes.addFlags(c)
	f.VarP(&o.params, "parameter-list", "L", "measure each command once per value, `NAME VALUES` (comma-separated, \\, for a comma in one), with each {NAME} in it and in the hooks replaced (repeat for every combination)")
	f.VarP(&o.scan, "parameter-scan", "P", "measure each command once per number from MIN to MAX, `NAME MIN MAX`, with each {NAME} replaced")
	f.StringVarP(&o.step, "parameter-step-size", "D", "", "-P's step, `DELTA` (default 1; needed for decimals)")
	f.Float64Var(&o.units, "units", 0, "each run does `N` units of work: report the energy per unit and units per joule")
	f.StringVar(&o.unit, "unit", "unit", "the `NAME` of the unit of work of --units or --units-from, such as token")
	f.StringVar(&o.unitsFrom, "units-from", "", "read each run's units of work from its output: the first group of `REGEX`")
	addRefusedFlags(c)
	return c
}

// validate refuses, before anything runs, options that cannot work, and
// makes the jobs.
func (o *benchOptions) validate() error {
	usage := "usage: exopower bench [flags] COMMAND..."
	switch {
	case len(o.commands) == 0 && o.reference == "":
		return cli.Fail(errors.New("bench: no command to measure"), usage)
	case o.warmup < 0:
		return cli.Fail(fmt.Errorf("--warmup %d: it takes 0 or more", o.warmup))
	case o.baseline.d < 0:
		return cli.Fail(fmt.Errorf("--baseline %v: it takes auto, 0 (none) or a duration", o.baseline.d), "auto, the default, measures as long as the runs need")
	case o.cooldown < 0:
		return cli.Fail(fmt.Errorf("--cooldown %v: it takes 0 or a duration", o.cooldown))
	case o.set["reference-name"] && o.reference == "":
		return cli.Fail(errors.New("--reference-name names --reference's command: give --reference too"))
	}
	for _, c := range o.commands {
		if strings.TrimSpace(c) == "" || o.reference != "" && strings.TrimSpace(o.reference) == "" {
			return cli.Fail(errors.New("bench: an empty command"), usage)
		}
	}
	for _, check := range []func() error{o.validateRuns, o.validateShell, o.validateFailures, o.validateStyle, o.validateUnits, o.makeJobs} {
		if err := check(); err != nil {
			return err
		}
	}
	return o.commonOptions.validate()
}

// config is what the runner runs and how, as the user id runs it.
func (o *benchOptions) config(s *cli.Streams, id child.Identity) bench.Config {
	least, most := o.runBounds()
	cfg := bench.Config{
		Jobs: o.jobs, Runs: least, MaxRuns: most, MinTime: time.Duration(o.minTime * float64(time.Second)),
		Warmup: o.warmup, Cooldown: o.cooldown, Baseline: o.baseline.d, AutoBaseline: o.baseline.auto, Interval: o.interval,
		IgnoreFailure: o.failures, Argv: o.argv, Identity: id, Input: o.inputPath,
		UnitsFrom: o.unitsRE, Unit: o.unitName(), Signals: s.Signals, Messages: s.Err,
		// The output of the jobs that --output=inherit (or
		// --show-output) lets through; with --json, stdout is the JSON's.
		Stdout: s.Out, Stderr: s.Err,
	}
	if o.json {
		cfg.Stdout = s.Err
	}
	if o.unitsSet {
		cfg.Units = &o.units
	}
	var w io.Writer
	if s.ErrTTY && o.progress() {
		w = s.Err
	}
	// With the runs counted from the first one's pace, the least is what
	// is known beforehand.
	tail := o.baseline.d
	if o.baseline.auto {
		tail = bench.IdlePiece(o.interval)
	}
	cfg.Progress = bench.NewProgress(w, len(cfg.Jobs)*least, tail)
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
	if err := o.checkFiles(id); err != nil {
		return err
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
	// Each command's block is written as soon as its runs are done, as
	// hyperfine writes each benchmark; the rest once all are.
	var text *bench.Text
	if !o.json && o.style != "none" {
		text = bench.NewText(s.Out, s.Err, o.styles(s.Out, s.OutTTY, s.Getenv), o.styles(s.Err, s.ErrTTY, s.Getenv))
		text.TimeUnit = o.timeUnit
		cfg.Finished = text.Benchmark
	}
	r := bench.NewRunner(cfg, meter)
	rep := r.Measure(ctx)
	if err := o.deliver(s, rep, id, text); err != nil {
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
	if stopStart() {
		if err == nil {
			meter.Stop()
		}
		return nil, cli.Fail(errors.New(nothing))
	}
	if err != nil {
		return nil, err
	}
	return bench.NewStreamMeter(meter), nil
}

// deliver finishes the report and writes it to stdout (the rest of
// text, or the JSON) and the exports.
func (o *benchOptions) deliver(s *cli.Streams, rep *bench.Report, id child.Identity, text *bench.Text) error {
	ref := -1
	if o.reference != "" {
		ref = 0
	}
	rep.TimeUnit, rep.Sort = o.timeUnit, o.sortOrder()
	rep.Finish(ref)
	var err error
	switch {
	case o.json:
		err = cli.Wrote("stdout", output.WriteJSON(s.Out, rep))
	case text != nil:
		err = cli.Wrote("stdout", text.Summary(rep))
	}
	var outs []fileOut
	for _, e := range o.exports() {
		outs = append(outs, fileOut{e.path, func(w io.Writer) error { return e.write(w, rep) }})
	}
	return writeOuts(s, id, err, outs)
}

// fileOut is one of a report's exports: its path ("" none, - stdout)
// and what writes it.
type fileOut struct {
	path  string
	write func(io.Writer) error
}

// writeOuts writes the exports after the report's own output, whose
// error is err, each file as the user id, and fails with every error
// but a reader of stdout gone away.
func writeOuts(s *cli.Streams, id child.Identity, err error, outs []fileOut) error {
	for _, e := range outs {
		switch e.path {
		case "":
		case "-":
			err = errors.Join(err, cli.Wrote("stdout", e.write(s.Out)))
		default:
			err = errors.Join(err, cli.Wrote(e.path, output.WriteFile(e.path, e.write, id.Cred)))
		}
	}
	if err != nil && !cli.BrokenPipe(err) {
		return cli.Fail(err)
	}
	return nil
}

// export is one --export-* flag: its name, its file and its writer.
type export struct {
	flag, path string
	write      func(io.Writer, *bench.Report) error
}

func (o *benchOptions) exports() []export {
	return []export{
		{"--export-json", o.exportJSON, func(w io.Writer, r *bench.Report) error { return output.WriteJSON(w, r) }},
		{"--export-csv", o.exportCSV, bench.WriteCSV},
		{"--export-markdown", o.exportMD, bench.WriteMarkdown},
		{"--export-asciidoc", o.exportAsciiDoc, bench.WriteAsciiDoc},
		{"--export-orgmode", o.exportOrg, bench.WriteOrgMode},
	}
}
