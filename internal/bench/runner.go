package bench

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/exopower/exopower/internal/access"
	"github.com/exopower/exopower/internal/attrib"
	"github.com/exopower/exopower/internal/calibrate"
	"github.com/exopower/exopower/internal/child"
	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/cost"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/wire"
)

// Meter measures the runs of a bench, one at a time, and the idle
// machines: over this Mac's stream (StreamMeter), over the nodes of
// --node (NodesMeter), or, in tests, over made-up numbers. It is to the
// Runner what hyperfine's Executor is to its scheduler.
type Meter interface {
	// Begin opens the span of a run.
	Begin(ctx context.Context) error
	// End closes it at at and describes it as a run of a command that
	// ended with status and signal.
	End(ctx context.Context, at time.Time, status int, signal string) Run
	// Idle measures the idle machines as one span of d from now, waiting
	// with sleep, which reports false when the bench was cut short
	// meanwhile (then the span ends there): one piece of an idle span.
	Idle(ctx context.Context, d time.Duration, sleep func(time.Duration) bool) (IdleSpan, error)
	// Close lets go of what the meter holds, and says where the numbers
	// came from and what the report should warn of how it ended.
	Close() (wire.Source, []string)
}

// Job is one benchmarked command with its parameters put in it and in
// its hooks.
type Job struct {
	// Name names the command in the report and the messages: -n's name,
	// or the command itself.
	Name string
	// Label is Name with the parameters that the command does not use,
	// as hyperfine shows a benchmark: "echo test (branch = master)". The
	// text and the tables show it; JSON and CSV have Name and the
	// parameters apart, as hyperfine's do.
	Label                             string
	Command                           string
	Params                            map[string]string
	Setup, Prepare, Conclude, Cleanup string
	// Output is where the output of the command, and of its hooks, goes.
	Output Output
}

// Hooks are the unmeasured commands around a benchmarked one.
type Hooks struct{ Setup, Prepare, Conclude, Cleanup string }

// Config says what a Runner runs and how.
type Config struct {
	Jobs []Job
	// Runs are each command's measured runs, Warmup its runs before them.
	// As hyperfine counts them: at least Runs, at most MaxRuns (0: no
	// limit), and between them as many as fill MinTime at the pace of
	// the command's first run (see RunCount).
	Runs, Warmup int
	MaxRuns      int
	MinTime      time.Duration
	// Cooldown is the wait between runs; Baseline the idle span before
	// the first run and after the last (0: none), measured in pieces of
	// IdlePiece(Interval). With AutoBaseline it is the most of each:
	// the span before is one piece, the latter half of each cooldown
	// is measured too, and the span after lasts until the pieces give
	// the idle power as closely as the runs need (IdleNeed, IdleEnough).
	Cooldown, Baseline time.Duration
	AutoBaseline       bool
	// Interval is the sample interval, for the report.
	Interval time.Duration
	// IgnoreFailure says which failures of a measured command (or of
	// its warmup) are measured all the same.
	IgnoreFailure Failures
	// Argv turns a command into the argv that runs it, or says why it
	// cannot (a quote not closed).
	Argv func(string) ([]string, error)
	// Input is the file every command reads as its standard input,
	// opened anew for each as the user the commands run as; "" is the
	// null device.
	Input string
	// Identity is whom the commands run as.
	Identity child.Identity
	// Processes, when not nil, follows each measured run's processes
	// (--attribute): the run's own energy beside the Mac's. Others is
	// how many processes besides a run's share its coalition.
	Processes attrib.Kernel
	Others    int
	// Stdout and Stderr take the output of the jobs whose Output is
	// OutputInherit; nil discards it.
	Stdout, Stderr io.Writer
	// UnitsFrom reads each run's units of work from its output; else
	// Units, when not nil, are every run's. Unit names them (nil: no
	// units).
	UnitsFrom *regexp.Regexp
	Units     *float64
	Unit      *string
	// Signals cut the bench short; Messages takes what the runner says
	// of them.
	Signals  <-chan os.Signal
	Messages io.Writer
	// Progress draws where the bench is; nil draws nothing.
	Progress *Progress
	// Finished, when not nil, is given each command's result as soon as
	// its runs are done, before the next command's begin: its index
	// among the results, and Result.Preview's statistics. It writes it
	// at once, as hyperfine writes each benchmark.
	Finished func(i int, r Result)
	// Calibration is this Mac's calibration (exopower calibrate), held
	// to the Mac and its source already, from which each run's energy at
	// the wall is estimated; nil: none (with --wall, over --node).
	Calibration *calibrate.Calibration
	// Rates price each command's runs (--price, --carbon-intensity);
	// none prices nothing.
	Rates cost.Rates

	paths map[string]string   // argv[0] -> the file to execute
	argvs map[string][]string // command -> its argv
}

// Look finds every program the bench will run, in PATH as the user the
// commands run as may, before anything runs, and makes every command's
// argv: a command that cannot be split into words is known then.
func (c *Config) Look(path string) error {
	c.paths, c.argvs = map[string]string{}, map[string][]string{}
	for _, j := range c.Jobs {
		for _, cmd := range []string{j.Command, j.Setup, j.Prepare, j.Conclude, j.Cleanup} {
			if _, ok := c.argvs[cmd]; ok || cmd == "" {
				continue
			}
			argv, err := c.Argv(cmd)
			if err != nil {
				return err
			}
			if len(argv) == 0 {
				return cli.Fail(&HyperfineError{Sentence: "Can not execute empty command",
					Detail: fmt.Sprintf(": %s has no words to run", output.ShellQuote([]string{cmd}))}, "give the command a program to run")
			}
			c.argvs[cmd] = argv
			program := argv[0]
			if _, ok := c.paths[program]; ok {
				continue
			}
			found, err := child.Look(program, path, c.Identity.Cred)
			if err != nil {
				// Named as hyperfine names it: the benchmark's name,
				// or the hook's command.
				name := cmd
				if cmd == j.Command {
					name = j.Name
				}
				return failedToRun(name, err)
			}
			c.paths[program] = found
		}
	}
	return nil
}

// Runner runs a bench: the idle baseline, each command's setup, warmup,
// measured runs and cleanup, and the closing baseline, each measured run
// one span of its Meter.
type Runner struct {
	cfg   Config
	meter Meter
	// signal is the number of the signal that cut the bench short, and
	// failed the error that did; both are zero while it goes on.
	signal int
	failed error
	// now is the clock that times a command's first run, for RunCount.
	now func() time.Time
	// before, between and after are the pieces of the idle spans.
	before, between, after []IdleSpan
}

// NewRunner runs cfg over meter; cfg.Look must have found the programs.
func NewRunner(cfg Config, meter Meter) *Runner {
	if cfg.Progress == nil {
		cfg.Progress = NewProgress(nil, 0, 0)
	}
	return &Runner{cfg: cfg, meter: meter, now: time.Now}
}

// Err is what cut the bench short: a failure, or a signal as the status
// 128+N; nil when it ran to the end.
func (b *Runner) Err() error {
	switch {
	case b.failed != nil:
		return b.failed
	case b.signal != 0:
		return cli.Exit(128 + b.signal)
	}
	return nil
}

func (b *Runner) cut() bool { return b.signal != 0 || b.failed != nil }

// Measure runs the baseline and every command's runs, closes the meter
// and returns the report of what was measured, not yet finished.
func (b *Runner) Measure(ctx context.Context) *Report {
	rep := NewReport(b.cfg.Interval)
	if b.cfg.Baseline > 0 {
		b.before = b.idleBefore(ctx)
	}
	rep.Unit, rep.cal = b.cfg.Unit, b.cfg.Calibration
	for _, j := range b.cfg.Jobs {
		if b.cut() {
			break
		}
		rep.Results = append(rep.Results, b.runCommand(ctx, j))
		if b.cfg.Finished != nil {
			b.cfg.Progress.Clear()
			i := len(rep.Results) - 1
			b.cfg.Finished(i, rep.Results[i].Preview(b.cfg.Interval, b.cfg.Unit))
		}
	}
	if b.cfg.Baseline > 0 && !b.cut() {
		b.after = b.idleAfter(ctx, rep.Results)
	}
	b.cfg.Progress.Clear()
	rep.Baseline = NewBaseline(b.before, b.between, b.after)
	rep.Complete = !b.cut()
	var warnings []string
	rep.Source, warnings = b.meter.Close()
	rep.Warnings = append(rep.Warnings, warnings...)
	return rep
}

// idleBefore measures the idle Mac before the first run: the baseline's
// length, or with AutoBaseline one piece, all that is known to be needed
// before any run.
func (b *Runner) idleBefore(ctx context.Context) []IdleSpan {
	if !b.cfg.AutoBaseline {
		b.cfg.Progress.Idle(b.cfg.Baseline)
		return b.idlePieces(ctx, b.cfg.Baseline)
	}
	piece := IdlePiece(b.cfg.Interval)
	b.cfg.Progress.Idle(piece)
	return b.idlePieces(ctx, piece)
}

// idleAfter measures the idle Mac after the last run: the baseline's
// length, or with AutoBaseline piece after piece until they, with those
// before and between the runs, give the idle power as closely as the
// runs need, at most the baseline's length.
func (b *Runner) idleAfter(ctx context.Context, results []Result) []IdleSpan {
	if !b.cfg.AutoBaseline {
		b.cfg.Progress.Idle(b.cfg.Baseline)
		return b.idlePieces(ctx, b.cfg.Baseline)
	}
	b.cfg.Progress.IdleAtMost(b.cfg.Baseline)
	piece := IdlePiece(b.cfg.Interval)
	need := IdleNeed(results)
	var after []IdleSpan
	for spent := time.Duration(0); spent+piece <= max(b.cfg.Baseline, piece) && !b.cut(); spent += piece {
		after = append(after, b.idlePieces(ctx, piece)...)
		ws, _ := pieces(slices.Concat(b.before, b.between, after))
		if IdleEnough(ws, need) {
			break
		}
	}
	return after
}

// idlePieces measures the idle machines for d from now, in pieces of
// IdlePiece back to back (d split evenly, none shorter than half a piece
// unless d is). A signal ends the piece it comes in, and any wait on the
// meter then (a node's answer), at once.
func (b *Runner) idlePieces(ctx context.Context, d time.Duration) []IdleSpan {
	n := max(1, int(math.Round(float64(d)/float64(IdlePiece(b.cfg.Interval)))))
	var spans []IdleSpan
	for i := range n {
		if b.cut() {
			break
		}
		ictx, stop := b.interruptible(ctx)
		s, err := b.meter.Idle(ictx, d*time.Duration(i+1)/time.Duration(n)-d*time.Duration(i)/time.Duration(n),
			func(d time.Duration) bool { return sleepCtx(ictx, d) })
		stop()
		if err != nil && b.failed == nil && b.signal == 0 {
			b.failed = err
		}
		spans = append(spans, s)
	}
	return spans
}

// cooldown waits for the cooldown between runs. With AutoBaseline its
// latter half, where the Mac has settled from the run before, is
// measured as idle, in as many whole pieces as fit: a gap the bench
// waits anyway. It reports whether the bench goes on.
func (b *Runner) cooldown(ctx context.Context) bool {
	piece := IdlePiece(b.cfg.Interval)
	n := b.cfg.Cooldown / 2 / piece
	if !b.cfg.AutoBaseline || b.cfg.Baseline <= 0 || n == 0 {
		return b.sleep(b.cfg.Cooldown)
	}
	if !b.sleep(b.cfg.Cooldown - n*piece) {
		return false
	}
	b.between = append(b.between, b.idlePieces(ctx, n*piece)...)
	return !b.cut()
}

// runCommand runs j's setup, warmup, measured runs and cleanup. How
// many runs is known after the first, as in hyperfine.
func (b *Runner) runCommand(ctx context.Context, j Job) Result {
	res := Result{Command: j.Name, Parameters: j.Params, Runs: []Run{}, label: j.Label, cal: b.cfg.Calibration, rates: b.cfg.Rates}
	b.hook("--setup", j, j.Setup)
	for i := 0; i < b.cfg.Warmup && !b.cut(); i++ {
		b.hook("--prepare", j, j.Prepare)
		b.warmup(j, i)
		b.hook("--conclude", j, j.Conclude)
	}
	n := RunCount(b.cfg.Runs, b.cfg.MaxRuns, 0, 0)
	for i := 0; i < n && !b.cut(); i++ {
		if i > 0 {
			b.cooldown(ctx)
		}
		began := b.now()
		b.hook("--prepare", j, j.Prepare)
		if b.cut() {
			break
		}
		b.cfg.Progress.Run(cmp.Or(j.Label, j.Name), i+1, n)
		if run, ok := b.measured(ctx, j, i); ok {
			res.Runs = append(res.Runs, run)
			b.cfg.Progress.Ran(float64(run.EnergyJoules.Total))
		}
		b.hook("--conclude", j, j.Conclude)
		if i == 0 {
			n = RunCount(b.cfg.Runs, b.cfg.MaxRuns, b.cfg.MinTime, b.now().Sub(began))
		}
	}
	if b.signal == 0 {
		b.hook("--cleanup", j, j.Cleanup)
	}
	return res
}

// RunCount is how many measured runs a command gets, by hyperfine's
// rule: as many as fill minTime at the pace of its first run, which
// took first (its --prepare and --conclude included, and here the waits
// on the meter at its edges too), but no fewer than least and, when most
// is not 0, no more than most. With first 0, not yet known, it is least
// within most.
func RunCount(least, most int, minTime, first time.Duration) int {
	n := least
	if first > 0 && minTime/first > time.Duration(n) {
		n = int(min(minTime/first, math.MaxInt32))
	}
	if most > 0 && n > most {
		n = most
	}
	return n
}

// command is c, one of j's commands, ready to start as the bench's
// user: its input as --input says, its output as j's, and its stdout
// copied to capture too when that is not nil. iteration, when not "", is
// the run's $EXOPOWER_ITERATION and $HYPERFINE_ITERATION. done closes
// what was opened for it, once it has ended.
func (b *Runner) command(j Job, c, iteration string, capture io.Writer) (cmd child.Command, done func(), err error) {
	argv := b.cfg.argvs[c]
	cmd = child.Command{Argv: argv, Path: b.cfg.paths[argv[0]], Identity: b.cfg.Identity}
	if iteration != "" {
		cmd.Identity.Env = append(slices.Clip(cmd.Identity.Env), "EXOPOWER_ITERATION="+iteration, "HYPERFINE_ITERATION="+iteration)
	}
	var files []*os.File
	done = func() {
		for _, f := range files {
			f.Close()
		}
	}
	if b.cfg.Input != "" {
		f, err := access.Open(b.cfg.Input, b.cfg.Identity.Cred)
		if err != nil {
			return cmd, done, cli.Fail(fmt.Errorf("--input: %w", err), "nothing after it was run; the runs so far are in the summary")
		}
		files, cmd.Stdin = append(files, f), f
	}
	switch j.Output.Kind {
	case OutputInherit:
		cmd.Stdout, cmd.Stderr = b.cfg.Stdout, b.cfg.Stderr
	case OutputPipe:
		cmd.Stdout = io.Discard
	case OutputFile:
		f, err := createAs(j.Output.Path, b.cfg.Identity.Cred)
		if err != nil {
			return cmd, done, cli.Fail(fmt.Errorf("--output: %w", err), "nothing after it was run; the runs so far are in the summary")
		}
		files, cmd.Stdout = append(files, f), f
	}
	switch {
	case capture != nil && cmd.Stdout != nil:
		cmd.Stdout = io.MultiWriter(capture, cmd.Stdout)
	case capture != nil:
		cmd.Stdout = capture
	}
	return cmd, done, nil
}

// measured runs c once as a span of the meter. ok is false when the run
// was interrupted: a run cut short says nothing of the command.
func (b *Runner) measured(ctx context.Context, j Job, i int) (Run, bool) {
	var out *tailBuffer
	if b.cfg.UnitsFrom != nil {
		out = &tailBuffer{}
	}
	cmd, done, err := b.command(j, j.Command, strconv.Itoa(i), out.writer())
	defer done()
	if err != nil {
		b.failed = err
		return Run{}, false
	}
	// Opening the spans waits on the meter (the nodes answer once their
	// source has sampled): a signal meanwhile ends the bench, and the
	// spans opened are closed again.
	bctx, stop := b.interruptible(ctx)
	err = b.meter.Begin(bctx)
	stop()
	switch {
	case b.signal != 0:
		if err == nil {
			b.end(ctx, time.Now())
		}
		return Run{}, false
	case err != nil:
		b.failed = err
		return Run{}, false
	}
	tree := b.follow(&cmd)
	defer tree.Stop() // on every path, before the accounting is closed
	started := time.Now()
	p, err := child.Start(cmd)
	if err != nil {
		b.meter.End(ctx, time.Now(), 0, "")
		b.failed = failedToRun(j.Name, err)
		return Run{}, false
	}
	exit := b.wait(p)
	if b.signal != 0 {
		b.end(ctx, exit.At)
		return Run{}, false
	}
	// A signal now cuts the wait for the window that covers the end short.
	endCtx, stopEnd := b.interruptible(ctx)
	run := b.meter.End(endCtx, exit.At, exit.Status, exit.Signal)
	if stopEnd(); b.signal != 0 {
		return Run{}, false
	}
	if exit.Status != 0 && !b.cfg.IgnoreFailure.Ignores(exit.Status) {
		b.failed = &cli.Error{Status: exit.Status, Err: commandFailed(j.Name, exit.Status, exit.Signal, false, i+1),
			Hints: failureHints(exit.Status)}
	}
	// The command's own time, as hyperfine measures it: from just
	// before it starts to its end, and its CPU time.
	run.WallSeconds = wire.Num(exit.At.Sub(started).Seconds())
	run.UserSeconds, run.SystemSeconds = wire.Num(exit.User.Seconds()), wire.Num(exit.System.Seconds())
	run.Units = b.units(out)
	run.attribute(tree)
	return run, true
}

// follow has the run's processes followed (--attribute): nil without.
func (b *Runner) follow(cmd *child.Command) *attrib.Command {
	if b.cfg.Processes == nil {
		return nil
	}
	tree := attrib.NewCommand(b.cfg.Processes, attrib.PollInterval, b.cfg.Others)
	cmd.Watch = tree.Watch
	return tree
}

// attribute puts what the run's own processes drew in it, beside the
// Mac's energy over its span.
func (run *Run) attribute(tree *attrib.Command) {
	if tree == nil {
		return
	}
	var w []string
	run.Attribution, w = tree.Attribution(attrib.FromComponents(run.EnergyJoules))
	run.Warnings = append(run.Warnings, w...)
}

// end closes a span that measures nothing (the bench was cut short), at
// at: a further signal cuts its wait short.
func (b *Runner) end(ctx context.Context, at time.Time) {
	ctx, stop := b.interruptible(ctx)
	b.meter.End(ctx, at, 0, "")
	stop()
}

// interruptible returns a context that the next signal ends, for a wait
// on the meter (a node's answer, the window that covers an end): stop
// ends it, and a signal that came meanwhile cuts the bench short, as in
// sleep.
func (b *Runner) interruptible(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	done, finished := make(chan struct{}), make(chan struct{})
	var sig os.Signal
	go func() {
		defer close(finished)
		select {
		case sig = <-b.cfg.Signals:
			cancel()
		case <-done:
		}
	}()
	return ctx, func() {
		close(done)
		<-finished
		cancel()
		if sig != nil && b.signal == 0 {
			b.signal = int(sig.(syscall.Signal))
			b.cfg.Progress.Clear()
		}
	}
}

// sleepCtx waits for d, or until ctx ends; it reports whether d passed.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// units are a run's units of work: Units, or what UnitsFrom reads from
// its output; nil without, or when unread.
func (b *Runner) units(out *tailBuffer) *wire.Num {
	var u float64
	ok := b.cfg.Units != nil
	if ok {
		u = *b.cfg.Units
	}
	if out != nil {
		u, ok = UnitsFrom(b.cfg.UnitsFrom, out.Bytes())
	}
	if !ok {
		return nil
	}
	n := wire.Num(u)
	return &n
}

// hook runs c, j's hook of flag, unmeasured: a failure cuts the bench
// short.
func (b *Runner) hook(flag string, j Job, c string) {
	if exit, ran := b.aux(j, c, ""); ran && exit.Status != 0 && b.signal == 0 {
		b.failed = hookFailed(flag, c, exit.Status)
	}
}

// warmup runs j's command unmeasured, its warmup run i (from 0): a
// failure that --ignore-failure does not ignore cuts the bench short.
func (b *Runner) warmup(j Job, i int) {
	exit, ran := b.aux(j, j.Command, fmt.Sprintf("warmup-%d", i))
	if ran && b.signal == 0 && !b.cfg.IgnoreFailure.Ignores(exit.Status) {
		b.failed = cli.Fail(commandFailed(j.Name, exit.Status, exit.Signal, true, i+1), failureHints(exit.Status)...)
	}
}

// failureHints are the next steps after a command failed with status.
func failureHints(status int) []string {
	return []string{
		fmt.Sprintf("pass --ignore-failure=%d (or --ignore-failure, for any status) to measure it all the same; the runs so far are in the summary", status),
		"--show-output shows what went wrong",
	}
}

// aux runs c, one of j's commands, unmeasured (iteration, when not "",
// is its warmup run's $HYPERFINE_ITERATION), and says how it ended; ran
// is false when it was not run, or could not start (b.failed says why).
func (b *Runner) aux(j Job, c, iteration string) (exit child.Exit, ran bool) {
	if c == "" || b.cut() {
		return exit, false
	}
	cmd, done, err := b.command(j, c, iteration, nil)
	defer done()
	if err != nil {
		b.failed = err
		return exit, false
	}
	p, err := child.Start(cmd)
	if err != nil {
		b.failed = failedToRun(c, err)
		return exit, false
	}
	return b.wait(p), true
}

// wait waits for a command. The first signal is passed on to it and ends
// the bench once it has ended; a second one kills it.
func (b *Runner) wait(p *child.Process) child.Exit {
	for {
		select {
		case <-p.Done():
			return p.Wait()
		case sig := <-b.cfg.Signals:
			if b.signal != 0 {
				p.Kill()
				continue
			}
			b.signal = int(sig.(syscall.Signal))
			p.Forward(sig.(syscall.Signal))
			b.cfg.Progress.Clear()
			fmt.Fprintf(b.cfg.Messages, "exopower: %v: ending the bench once the command ends; again to stop at once\n", sig)
		}
	}
}

// sleep waits for d, or for a signal, which cuts the bench short. It
// reports whether the bench goes on.
func (b *Runner) sleep(d time.Duration) bool {
	if d <= 0 || b.cut() {
		return !b.cut()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case sig := <-b.cfg.Signals:
		b.signal = int(sig.(syscall.Signal))
	}
	return !b.cut()
}
