package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/exopower/exopower/internal/attrib"
	"github.com/exopower/exopower/internal/child"
	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/sampler"
	"github.com/exopower/exopower/internal/source"
	"github.com/exopower/exopower/internal/wall"
	"github.com/exopower/exopower/internal/wire"
)

type runOptions struct {
	commonOptions
	output    string
	asRoot    bool
	attribute bool
	app       string
	appGiven  bool // --app given, if empty
	argv      []string
	nodes     nodeOptions
	files     windowFiles
	wall      wallOptions
	cost      costOptions
}

// notRun says that a signal came before the command started.
const notRun = "interrupted before the command started; it was not run"

func newRunCmd(s *cli.Streams) *cobra.Command {
	var o runOptions
	c := &cobra.Command{
		Use:   "run [flags] -- COMMAND [ARGS...]",
		Short: "Measure the energy of one command",
		Long: `Run COMMAND (directly, without a shell) and measure the Mac's energy over
exactly its lifetime: the SoC's, and without root the memory's and the whole
Mac's too (see --source). The summary goes to stderr, like time(1), so that the
command's stdout stays clean; exopower exits with the command's status.`,
		Example: `  exopower run -- python bench.py
  sudo exopower run -- python bench.py
  sudo exopower run --json -- ./llm --prompt hi | jq .energy_joules.total
  sudo exopower run -o result.json -- make -j8
  sudo exopower run --samples windows.csv --plot power.svg -- make -j8`,
		RunE: func(c *cobra.Command, args []string) error {
			o.argv = args
			o.appGiven = c.Flags().Changed("app")
			return runRun(c.Context(), s, &o)
		},
	}
	// Flags end at the command: exopower run ls -l passes -l to ls.
	c.Flags().SetInterspersed(false)
	o.addFlags(c, 100*time.Millisecond)
	c.Flags().StringVarP(&o.output, "output", "o", "", "write the summary to `FILE` (JSON for .json or with --json), leaving stdout and stderr to the command")
	c.Flags().BoolVar(&o.asRoot, "as-root", false, "under sudo, run the command as root instead of as the user who ran sudo")
	c.Flags().BoolVar(&o.attribute, "attribute", false, "also measure the command's own processes: their CPU energy as the kernel counts it, their share of the GPU's, and the rest of the Mac's (macOS 13 or later)")
	c.Flags().StringVar(&o.app, "app", "", "also measure the app `NAME`'s energy over the command's span, as exopower top names and counts it: its processes' CPU energy as the kernel counts it, its share of the GPU's (macOS 13 or later)")
	o.nodes.addFlags(c)
	o.files.addFlags(c)
	o.wall.addFlags(c)
	o.cost.addFlags(c)
	return c
}

func runRun(ctx context.Context, s *cli.Streams, o *runOptions) error {
	cmd, err := o.command(s)
	if err != nil {
		return err
	}
	// With -o, stdout and stderr are the command's alone: exopower
	// says nothing there unless it fails.
	if cmd.Identity.Note != "" && o.output == "" {
		fmt.Fprintf(s.Err, "exopower: note: %s\n", cmd.Identity.Note)
	}
	if o.nodes.Given() {
		return o.runCluster(ctx, s, cmd)
	}
	tree, err := attrib.Begin(o.attribute, openKernel)
	if err != nil {
		return err
	}
	defer tree.Close()
	app, err := beginApp(o.app, o.appGiven)
	if err != nil {
		return err
	}
	defer app.Close()
	plug, err := o.wall.start(ctx, s, cmd.Identity)
	if err != nil {
		return err
	}
	defer plug.Close()
	return o.runHere(ctx, s, cmd, tree, app, plug)
}

// runHere measures cmd on this Mac, with what run's flags opened before
// anything started: the command's tree (--attribute), an app
// (--app), the plug (--wall).
func (o *runOptions) runHere(ctx context.Context, s *cli.Streams, cmd child.Command, tree *attrib.Session, app *appRun, plug *wall.Session) error {
	// A signal while powermetrics starts ends the run before the command
	// starts; one after that is forwarded to the command.
	startCtx, stopStart := cli.CancelOnSignal(ctx, s.Signals)
	meter, err := source.Start(startCtx, o.sourceOptions(s.Getenv, "exopower run -- "+output.ShellQuote(o.argv)))
	if err != nil {
		if stopStart() {
			return cli.Fail(errors.New(notRun))
		}
		return err
	}
	var windows output.WindowLog
	var onWindow func(sampler.Window, sampler.Totals)
	if o.files.Given() {
		onWindow = windows.Add
	}
	span := meter.Begin(startCtx, app.watch(onWindow))
	if stopStart() {
		meter.Stop()
		return cli.Fail(errors.New(notRun))
	}
	if err := app.start(span.Start); err != nil {
		meter.Stop()
		return err
	}
	tree.Watch(&cmd, othersOf(meter))
	plug.Mark()
	p, err := child.Start(cmd)
	if err != nil {
		meter.Stop()
		return err
	}
	exit, signals, late := waitCommand(s, p)
	app.end(exit.At)
	res := finishSpan(s, meter, span, exit.At, signals, late)
	sum := tree.Finish(output.NewSummary(res, span.Start, o.interval), res.Energy, res.Has)
	app.finish(sum, exit.At)
	addWall(sum, plug, span.Start, exit.At)
	if plug == nil {
		addWallEstimate(sum, res, cmd.Identity)
	}
	saved := o.files.Write(&windows, res, o.argv, wallReader(plug), cmd.Identity.Cred)
	return withFileError(o.deliver(s, sum, exit, signals, cmd.Identity), saved, exit.Status)
}

// finishSpan ends the span at end, once the window that covers it has
// come. A signal now cuts that wait short: the user wants what was
// measured, at once.
func finishSpan(s *cli.Streams, meter *sampler.Sampler, span *sampler.Span, end time.Time, signals int, late bool) sampler.Result {
	endCtx, stopEnd := cli.CancelOnSignal(context.Background(), s.Signals)
	if signals > 1 || late {
		stopEnd()
	}
	res := meter.Finish(endCtx, span, end)
	if (stopEnd() || late) && signals < 2 {
		res.Warnings = append(res.Warnings, "interrupted while waiting for the window that covers the command's end: "+
			"the summary holds what was measured by then, and its coverage shows what was not")
	}
	return res
}

// command checks the options and says what to run, as whom, before
// anything starts: a command that cannot run is not measured.
func (o *runOptions) command(s *cli.Streams) (child.Command, error) {
	if len(o.argv) == 0 {
		return child.Command{}, cli.Fail(errors.New("run: no command to measure"), "usage: exopower run [flags] -- COMMAND [ARGS...]")
	}
	if err := o.validate(); err != nil {
		return child.Command{}, err
	}
	if err := o.cost.resolve(s.Getenv); err != nil {
		return child.Command{}, err
	}
	id, err := child.Identify(o.asRoot, os.Geteuid(), s.Getenv, s.Environ())
	if err != nil {
		return child.Command{}, err
	}
	if err := output.CheckPath("-o", o.output, id.Cred); err != nil {
		return child.Command{}, err
	}
	if o.files.Given() && o.nodes.Given() {
		return child.Command{}, cli.Fail(errors.New("--samples and --plot are of this Mac's windows: not with --node"))
	}
	if o.attribute && o.nodes.Given() {
		return child.Command{}, cli.Fail(attrib.ErrNodes)
	}
	if o.appGiven && o.nodes.Given() {
		return child.Command{}, cli.Fail(errAppNodes)
	}
	if err := checkApp(o.app, o.appGiven); err != nil {
		return child.Command{}, err
	}
	if o.wall.url != "" && o.nodes.Given() {
		return child.Command{}, errWallWithNodes("--node sums them")
	}
	if err := o.files.Check(id.Cred); err != nil {
		return child.Command{}, err
	}
	path, err := child.Look(o.argv[0], s.Getenv("PATH"), id.Cred)
	if err != nil {
		return child.Command{}, err
	}
	cmd := child.Command{Argv: o.argv, Path: path, Identity: id, Stdin: s.In, Stdout: s.Out, Stderr: s.Err,
		Foreground: child.ForegroundOnTerminal()}
	if o.json && o.output == "" {
		// stdout carries the summary; the command's output goes to stderr.
		cmd.Stdout = s.Err
	}
	return cmd, nil
}

// waitCommand waits for the command to end. The first signal is passed on
// to it; a second one kills it: the user wants out now. late reports a
// signal that came once the command had ended: it is meant for the wait
// that follows, not for the command.
func waitCommand(s *cli.Streams, p *child.Process) (exit child.Exit, signals int, late bool) {
	for {
		select {
		case <-p.Done():
			return p.Wait(), signals, false
		case sig := <-s.Signals:
			if p.Ended() {
				return p.Wait(), signals, true
			}
			signals++
			if signals == 1 {
				p.Forward(sig.(syscall.Signal))
				fmt.Fprintf(s.Err, "exopower: %v: waiting for the command to end; again to stop at once\n", sig)
				continue
			}
			p.Kill()
		}
	}
}

// deliver completes the summary with the command's end, writes it, and
// returns the status to exit with: the command's.
func (o *runOptions) deliver(s *cli.Streams, sum *wire.Summary, exit child.Exit, signals int, id child.Identity) error {
	sum.Command = o.argv
	sum.ExitCode = &exit.Status
	o.cost.rates.Summary(sum)
	if exit.Signal != "" {
		sum.Signal = &exit.Signal
	}
	if signals > 1 {
		sum.Warnings = append(sum.Warnings, "interrupted twice: the command was killed and the wait for the last window cut short")
	}
	if exit.Err != nil {
		sum.Warnings = append(sum.Warnings, "the command's output: "+exit.Err.Error())
	}
	var err error
	if o.output != "" {
		err = output.SaveSummary(s, sum, o.output, o.json, id.Cred)
	} else {
		err = output.PrintSummary(s, o.json, o.json, sum)
	}
	// The status is the command's whatever became of the summary (scripts
	// rely on it), even after a second Ctrl-C killed it: as the summary's
	// exit_code says, one answer to "how did it end". A reader that went
	// away (| head) wanted no more: nothing to say.
	if err != nil && !cli.BrokenPipe(err) {
		return &cli.Error{Status: exit.Status, Err: err, Hints: cli.HintsOf(err)}
	}
	if exit.Status != 0 {
		return cli.Exit(exit.Status)
	}
	return nil
}
