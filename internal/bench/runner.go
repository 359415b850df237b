package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/exopower/exopower/internal/child"
	"github.com/exopower/exopower/internal/cli"
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
	// Idle measures the idle machines for d from now, waiting with sleep,
	// which reports false when the bench was cut short meanwhile (then
	// the span ends there).
	Idle(ctx context.Context, d time.Duration, sleep func(time.Duration) bool) (IdleSpan, error)
	// Close lets go of what the meter holds, and says where the numbers
	// came from and what the report should warn of how it ended.
	Close() (wire.Source, []string)
}

// IdleSpan is a span of the idle machines, and the parts of its windows
// within it: their spread gives the idle power's error.
type IdleSpan struct {
	Idle    *Idle
	Windows []Window
}

// Job is one benchmarked command with its parameters put in it and in
// its hooks.
type Job struct {
	Command                           string
	Params                            map[string]string
	Setup, Prepare, Conclude, Cleanup string
}

// Hooks are the unmeasured commands around a benchmarked one.
type Hooks struct{ Setup, Prepare, Conclude, Cleanup string }

// Jobs are the commands to measure, each once per combination of the
// lists' values, the reference (when not "") first and as it is.
func Jobs(commands []string, reference string, lists []ParameterList, h Hooks) []Job {
	var out []Job
	add := func(c string, p map[string]string) {
		s := func(x string) string { return Substitute(x, p) }
		out = append(out, Job{Command: s(c), Params: p, Setup: s(h.Setup), Prepare: s(h.Prepare), Conclude: s(h.Conclude), Cleanup: s(h.Cleanup)})
	}
	if reference != "" {
		add(reference, map[string]string{})
	}
	for _, c := range commands {
		for _, p := range Combinations(lists) {
			add(c, p)
		}
	}
	return out
}

// Config says what a Runner runs and how.
type Config struct {
	Jobs []Job
	// Runs are each command's measured runs, Warmup its runs before them.
	Runs, Warmup int
	// Cooldown is the wait between runs; Baseline the idle span before
	// the first run and after the last (0: none).
	Cooldown, Baseline time.Duration
	// Interval is the sample interval, for the report.
	Interval time.Duration
	// IgnoreFailure measures a command that fails all the same.
	IgnoreFailure bool
	// Argv turns a command into the argv that runs it.
	Argv func(string) []string
	// Identity is whom the commands run as.
	Identity child.Identity
	// Stdout and Stderr take the commands' output; nil discards it.
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

	paths map[string]string // argv[0] -> the file to execute
}

// Look finds every program the bench will run, in PATH as the user the
// commands run as may, before anything runs.
func (c *Config) Look(path string) error {
	c.paths = map[string]string{}
	for _, j := range c.Jobs {
		for _, cmd := range []string{j.Command, j.Setup, j.Prepare, j.Conclude, j.Cleanup} {
			if cmd == "" {
				continue
			}
			name := c.Argv(cmd)[0]
			if _, ok := c.paths[name]; ok {
				continue
			}
			found, err := child.Look(name, path, c.Identity.Cred)
			if err != nil {
				return err
			}
			c.paths[name] = found
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
}

// NewRunner runs cfg over meter; cfg.Look must have found the programs.
func NewRunner(cfg Config, meter Meter) *Runner {
	if cfg.Progress == nil {
		cfg.Progress = NewProgress(nil, 0, 0)
	}
	return &Runner{cfg: cfg, meter: meter}
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
	var before, after IdleSpan
	if b.cfg.Baseline > 0 {
		before = b.idle(ctx)
	}
	rep.Unit = b.cfg.Unit
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
		after = b.idle(ctx)
	}
	b.cfg.Progress.Clear()
	rep.Baseline = NewBaseline(before.Idle, after.Idle, append(before.Windows, after.Windows...))
	rep.Complete = !b.cut()
	var warnings []string
	rep.Source, warnings = b.meter.Close()
	rep.Warnings = append(rep.Warnings, warnings...)
	return rep
}

// idle measures the idle machines for the baseline's duration. A signal
// ends the idle span, and any wait on the meter then (a node's answer),
// at once.
func (b *Runner) idle(ctx context.Context) IdleSpan {
	b.cfg.Progress.Idle(b.cfg.Baseline)
	ictx, stop := b.interruptible(ctx)
	s, err := b.meter.Idle(ictx, b.cfg.Baseline, func(d time.Duration) bool { return sleepCtx(ictx, d) })
	stop()
	if err != nil && b.failed == nil && b.signal == 0 {
		b.failed = err
	}
	return s
}

// runCommand runs j's setup, warmup, measured runs and cleanup.
func (b *Runner) runCommand(ctx context.Context, j Job) Result {
	res := Result{Command: j.Command, Parameters: j.Params, Runs: []Run{}}
	b.aux("--setup", j.Setup)
	for i := 0; i < b.cfg.Warmup && !b.cut(); i++ {
		b.aux("--prepare", j.Prepare)
		b.aux("warmup of "+j.Command, j.Command)
		b.aux("--conclude", j.Conclude)
	}
	for i := 0; i < b.cfg.Runs && !b.cut(); i++ {
		if i > 0 {
			b.sleep(b.cfg.Cooldown)
		}
		b.aux("--prepare", j.Prepare)
		if b.cut() {
			break
		}
		b.cfg.Progress.Run(j.Command, i+1, b.cfg.Runs)
		if run, ok := b.measured(ctx, j.Command, i); ok {
			res.Runs = append(res.Runs, run)
			b.cfg.Progress.Ran(float64(run.EnergyJoules.Total))
		}
		b.aux("--conclude", j.Conclude)
	}
	if b.signal == 0 {
		b.aux("--cleanup", j.Cleanup)
	}
	return res
}

// command is c ready to start, as the bench's user, its output let
// through or not, and its stdout copied to capture too when that is not
// nil.
func (b *Runner) command(c string, capture io.Writer) child.Command {
	argv := b.cfg.Argv(c)
	cmd := child.Command{Argv: argv, Path: b.cfg.paths[argv[0]], Identity: b.cfg.Identity, Stdout: b.cfg.Stdout, Stderr: b.cfg.Stderr}
	switch {
	case capture != nil && cmd.Stdout != nil:
		cmd.Stdout = io.MultiWriter(capture, cmd.Stdout)
	case capture != nil:
		cmd.Stdout = capture
	}
	return cmd
}

// measured runs c once as a span of the meter. ok is false when the run
// was interrupted: a run cut short says nothing of the command.
func (b *Runner) measured(ctx context.Context, c string, i int) (Run, bool) {
	var out *tailBuffer
	if b.cfg.UnitsFrom != nil {
		out = &tailBuffer{}
	}
	// Opening the spans waits on the meter (the nodes answer once their
	// source has sampled): a signal meanwhile ends the bench, and the
	// spans opened are closed again.
	bctx, stop := b.interruptible(ctx)
	err := b.meter.Begin(bctx)
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
	started := time.Now()
	p, err := child.Start(b.command(c, out.writer()))
	if err != nil {
		b.meter.End(ctx, time.Now(), 0, "")
		b.failed = err
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
	if exit.Status != 0 && !b.cfg.IgnoreFailure {
		b.failed = &cli.Error{Status: exit.Status, Err: fmt.Errorf("%s failed with status %d in run %d", c, exit.Status, i+1),
			Hints: []string{"pass --ignore-failure to measure it all the same; the runs so far are in the summary"}}
	}
	// The command's own time, as hyperfine measures it: from just
	// before it starts to its end, and its CPU time.
	run.WallSeconds = wire.Num(exit.At.Sub(started).Seconds())
	run.UserSeconds, run.SystemSeconds = wire.Num(exit.User.Seconds()), wire.Num(exit.System.Seconds())
	run.Units = b.units(out)
	return run, true
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

// aux runs c, an unmeasured command (what names it for messages). A
// failure cuts the bench short.
func (b *Runner) aux(what, c string) {
	if c == "" || b.cut() {
		return
	}
	p, err := child.Start(b.command(c, nil))
	if err != nil {
		b.failed = err
		return
	}
	exit := b.wait(p)
	if exit.Status != 0 && b.signal == 0 && !(b.cfg.IgnoreFailure && strings.HasPrefix(what, "warmup")) {
		b.failed = cli.Fail(fmt.Errorf("%s %s failed with status %d", what, output.ShellQuote([]string{c}), exit.Status),
			"nothing after it was run; the runs so far are in the summary")
	}
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
