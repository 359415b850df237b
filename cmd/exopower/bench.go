package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/exopower/exopower/internal/bench"
	"github.com/exopower/exopower/internal/child"
	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/sampler"
	"github.com/exopower/exopower/internal/wire"
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

// checkExport refuses an export path that cannot be written, before the
// first run, naming the flag.
func checkExport(flag, path string, id child.Identity) error {
	return output.CheckPath(flag, path, id.Cred)
}

// argv is the command line that runs the shell string c.
func (o *benchOptions) argv(c string) []string {
	if o.shell == "none" {
		return strings.Fields(c)
	}
	return []string{o.shell, "-c", c}
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
		if err := checkExport(e[0], e[1], id); err != nil {
			return err
		}
	}
	if id.Note != "" {
		fmt.Fprintf(s.Err, "exopower: note: %s\n", id.Note)
	}
	b := &bencher{s: s, o: o, id: id, jobs: o.jobs()}
	b.prog = newProgress(nil, len(b.jobs)*o.runs, o.baseline)
	if s.ErrTTY && !o.showOutput {
		b.prog.w = s.Err
	}
	if err := b.look(); err != nil {
		return err
	}
	if err := b.start(ctx); err != nil {
		return err
	}
	rep := b.measure(ctx)
	if b.meter != nil {
		if err := b.meter.Stop(); err != nil {
			rep.Warnings = append(rep.Warnings, "powermetrics: "+err.Error())
		}
	} else {
		stopLocal(b.nodes.members)
	}
	return b.deliver(rep)
}

// start starts powermetrics, or reaches the nodes of --node.
func (b *bencher) start(ctx context.Context) error {
	if b.o.nodes.given() {
		n, err := connectNodes(ctx, b.s, b.o)
		b.nodes, b.rm = n, n
		return err
	}
	startCtx, stopStart := cli.CancelOnSignal(ctx, b.s.Signals)
	meter, err := startMeasuring(startCtx, b.o.powermetricsPath(b.s.Getenv), b.o.interval, "exopower bench "+output.ShellQuote(b.o.commands))
	if stopStart() && err == nil {
		meter.Stop()
		return cli.Fail(errors.New("interrupted before the first run; nothing was measured"))
	}
	if err != nil {
		return err
	}
	b.meter, b.rm = meter, &localMeter{m: meter}
	return nil
}

// deliver finishes the report, writes it to stdout and the exports, and
// returns the status to exit with.
func (b *bencher) deliver(rep *bench.Report) error {
	ref := -1
	if b.o.reference != "" {
		ref = 0
	}
	rep.Finish(ref)
	var err error
	if b.o.json {
		err = cli.Wrote("stdout", output.WriteJSON(b.s.Out, rep))
	} else {
		err = cli.Wrote("stdout", bench.WriteText(b.s.Out, rep, output.NewStyles(b.s.Out, b.s.OutTTY, b.s.Getenv)))
	}
	for _, e := range []struct {
		path  string
		write func(io.Writer, *bench.Report) error
	}{{b.o.exportJSON, func(w io.Writer, r *bench.Report) error { return output.WriteJSON(w, r) }},
		{b.o.exportCSV, bench.WriteCSV}, {b.o.exportMD, bench.WriteMarkdown}} {
		if e.path == "" {
			continue
		}
		werr := output.WriteFile(e.path, func(w io.Writer) error { return e.write(w, rep) }, b.id.Cred)
		err = errors.Join(err, cli.Wrote(e.path, werr))
	}
	switch {
	case err != nil && !cli.BrokenPipe(err):
		return cli.Fail(err)
	case b.failed != nil:
		return b.failed
	case b.signal != 0:
		return cli.Exit(128 + b.signal)
	}
	return nil
}

// bencher runs a bench over one powermetrics stream: each measured run
// is one span of it.
type bencher struct {
	s  *cli.Streams
	o  *benchOptions
	id child.Identity
	// meter is this Mac's stream, nil with --node; nodes are the nodes
	// of --node; rm measures the runs over the one or the other.
	meter *sampler.Sampler
	nodes *nodesMeter
	rm    runMeter
	jobs  []job
	prog  *progress
	paths map[string]string // argv[0] -> the file to execute
	// signal is the number of the signal that cut the bench short, and
	// failed the error that did; both are zero while it goes on.
	signal int
	failed error
}

func (b *bencher) cut() bool { return b.signal != 0 || b.failed != nil }

// look finds every program the bench will run, before anything runs.
func (b *bencher) look() error {
	b.paths = map[string]string{}
	var all []string
	for _, j := range b.jobs {
		all = append(all, j.command, j.setup, j.prepare, j.conclude, j.cleanup)
	}
	for _, c := range all {
		if c == "" {
			continue
		}
		name := b.o.argv(c)[0]
		if _, ok := b.paths[name]; ok {
			continue
		}
		path, err := child.Look(name, b.s.Getenv("PATH"), b.id.Cred)
		if err != nil {
			return err
		}
		b.paths[name] = path
	}
	return nil
}

// command is c ready to start, as the invoking user, with its output
// let through or not, and its stdout copied to capture too when that is
// not nil.
func (b *bencher) command(c string, capture io.Writer) child.Command {
	argv := b.o.argv(c)
	cmd := child.Command{Argv: argv, Path: b.paths[argv[0]], Identity: b.id}
	if b.o.showOutput {
		cmd.Stdout, cmd.Stderr = b.s.Out, b.s.Err
		if b.o.json {
			cmd.Stdout = b.s.Err
		}
	}
	switch {
	case capture != nil && b.o.showOutput:
		cmd.Stdout = io.MultiWriter(capture, cmd.Stdout)
	case capture != nil:
		cmd.Stdout = capture
	}
	return cmd
}

// measure runs the baseline and every command's runs, and returns the
// report of what was measured, not yet finished.
func (b *bencher) measure(ctx context.Context) *bench.Report {
	rep := bench.NewReport(b.o.interval)
	// The stream names the machine in its first document, which its
	// Sampler may not have taken yet at the start: asked at the end.
	defer func() {
		if b.meter != nil {
			rep.Source.HWModel, rep.Source.OSBuild = b.meter.Machine()
		}
	}()
	var before, after idleSpan
	if b.o.baseline > 0 {
		before = b.idle(ctx)
	}
	rep.Unit = b.o.unitName()
	for _, j := range b.jobs {
		if b.cut() {
			break
		}
		rep.Results = append(rep.Results, b.runCommand(ctx, j))
	}
	if b.o.baseline > 0 && !b.cut() {
		after = b.idle(ctx)
	}
	b.prog.clear()
	rep.Baseline = bench.NewBaseline(before.idle, after.idle, append(before.windows, after.windows...))
	rep.Complete = !b.cut()
	return rep
}

// runCommand runs j's setup, warmup, measured runs and cleanup.
func (b *bencher) runCommand(ctx context.Context, j job) bench.Result {
	res := bench.Result{Command: j.command, Parameters: j.params, Runs: []bench.Run{}}
	b.aux("--setup", j.setup)
	for i := 0; i < b.o.warmup && !b.cut(); i++ {
		b.aux("--prepare", j.prepare)
		b.aux("warmup of "+j.command, j.command)
		b.aux("--conclude", j.conclude)
	}
	for i := 0; i < b.o.runs && !b.cut(); i++ {
		if i > 0 {
			b.sleep(b.o.cooldown)
		}
		b.aux("--prepare", j.prepare)
		if b.cut() {
			break
		}
		b.prog.run(j.command, i+1, b.o.runs)
		if run, ok := b.measured(ctx, j.command, i); ok {
			res.Runs = append(res.Runs, run)
			b.prog.ran(float64(run.EnergyJoules.Total))
		}
		b.aux("--conclude", j.conclude)
	}
	if b.signal == 0 {
		b.aux("--cleanup", j.cleanup)
	}
	return res
}

// measured runs c once as a span of the stream. ok is false when the run
// was interrupted: a run cut short says nothing of the command.
func (b *bencher) measured(ctx context.Context, c string, i int) (bench.Run, bool) {
	var out *tailBuffer
	if b.o.unitsRE != nil {
		out = &tailBuffer{}
	}
	if err := b.rm.begin(ctx); err != nil {
		b.failed = err
		return bench.Run{}, false
	}
	p, err := child.Start(b.command(c, out.writer()))
	if err != nil {
		b.rm.end(ctx, time.Now(), 0, "")
		b.failed = err
		return bench.Run{}, false
	}
	exit := b.wait(p)
	if b.signal != 0 {
		b.rm.end(ctx, exit.At, 0, "")
		return bench.Run{}, false
	}
	// A signal now cuts the wait for the window that covers the end short.
	endCtx, stopEnd := cli.CancelOnSignal(ctx, b.s.Signals)
	run := b.rm.end(endCtx, exit.At, exit.Status, exit.Signal)
	if stopEnd() {
		b.signal = int(syscall.SIGINT)
		return bench.Run{}, false
	}
	if exit.Status != 0 && !b.o.ignoreFailure {
		b.failed = &cli.Error{Status: exit.Status, Err: fmt.Errorf("%s failed with status %d in run %d", c, exit.Status, i+1),
			Hints: []string{"pass --ignore-failure to measure it all the same; the runs so far are in the summary"}}
	}
	run.Units = b.units(out)
	return run, true
}

// units are a run's units of work: --units, or what --units-from reads
// from its output; nil without or when unread.
func (b *bencher) units(out *tailBuffer) *wire.Num {
	u, ok := b.o.units, b.o.unitsSet
	if out != nil {
		u, ok = bench.UnitsFrom(b.o.unitsRE, out.Bytes())
	}
	if !ok {
		return nil
	}
	n := wire.Num(u)
	return &n
}

// aux runs c, an unmeasured command (what names it for messages). A
// failure cuts the bench short.
func (b *bencher) aux(what, c string) {
	if c == "" || b.cut() {
		return
	}
	p, err := child.Start(b.command(c, nil))
	if err != nil {
		b.failed = err
		return
	}
	exit := b.wait(p)
	if exit.Status != 0 && b.signal == 0 && !(b.o.ignoreFailure && strings.HasPrefix(what, "warmup")) {
		b.failed = cli.Fail(fmt.Errorf("%s %s failed with status %d", what, output.ShellQuote([]string{c}), exit.Status),
			"nothing after it was run; the runs so far are in the summary")
	}
}

// wait waits for a command. The first signal is passed on to it and ends
// the bench once it has ended; a second one kills it.
func (b *bencher) wait(p *child.Process) child.Exit {
	for {
		select {
		case <-p.Done():
			return p.Wait()
		case sig := <-b.s.Signals:
			if b.signal != 0 {
				p.Kill()
				continue
			}
			b.signal = int(sig.(syscall.Signal))
			p.Forward(sig.(syscall.Signal))
			b.prog.clear()
			fmt.Fprintf(b.s.Err, "exopower: %v: ending the bench once the command ends; again to stop at once\n", sig)
		}
	}
}

// sleep waits for d, or for a signal, which cuts the bench short.
func (b *bencher) sleep(d time.Duration) {
	if d <= 0 || b.cut() {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case sig := <-b.s.Signals:
		b.signal = int(sig.(syscall.Signal))
	}
}

// idleSpan is a span of the idle Mac and the parts of its windows in it.
type idleSpan struct {
	idle    *bench.Idle
	windows []bench.Window
}

// idle measures the idle Mac for the baseline's duration, from the
// windows within the span: their spread gives the idle power's error.
func (b *bencher) idle(ctx context.Context) idleSpan {
	if b.nodes != nil {
		return b.idleNodes(ctx, b.nodes)
	}
	var mu sync.Mutex
	var ws []sampler.Window
	b.prog.idle(b.o.baseline)
	span := b.meter.Begin(ctx, func(w sampler.Window, _ sampler.Totals) {
		mu.Lock()
		ws = append(ws, w)
		mu.Unlock()
	})
	b.sleep(b.o.baseline)
	end := span.Start.Add(b.o.baseline)
	if b.signal != 0 {
		end = time.Now()
	}
	b.meter.End(ctx, span, end)
	mu.Lock()
	defer mu.Unlock()
	var parts []bench.Window
	for _, w := range ws {
		if d := minTime(w.End, end).Sub(maxTime(w.Start, span.Start)); d > 0 {
			parts = append(parts, bench.Window{Seconds: d.Seconds(), Watts: w.Power.Total})
		}
	}
	return idleSpan{idle: bench.NewIdle(span.Start, end.Sub(span.Start), parts), windows: parts}
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
