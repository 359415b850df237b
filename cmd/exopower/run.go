package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"
)

type runOptions struct {
	commonOptions
	output string
	asRoot bool
	argv   []string
}

func newRunCmd(s *streams) *cobra.Command {
	var o runOptions
	c := &cobra.Command{
		Use:   "run [flags] -- COMMAND [ARGS...]",
		Short: "Measure the energy of one command",
		Long: `Run COMMAND (directly, without a shell) and measure the SoC's energy over
exactly its lifetime. The summary goes to stderr, like time(1), so that the
command's stdout stays clean; exopower exits with the command's status.`,
		Example: `  sudo exopower run -- python bench.py
  sudo exopower run --json -- ./llm --prompt hi | jq .energy_joules.total
  sudo exopower run -o result.json -- make -j8`,
		RunE: func(c *cobra.Command, args []string) error {
			o.argv = args
			return runRun(c.Context(), s, &o)
		},
	}
	// Flags end at the command: exopower run ls -l passes -l to ls.
	c.Flags().SetInterspersed(false)
	o.addFlags(c, 100*time.Millisecond)
	c.Flags().StringVarP(&o.output, "output", "o", "", "write the summary to `FILE` (JSON for .json or with --json), leaving stdout and stderr to the command")
	c.Flags().BoolVar(&o.asRoot, "as-root", false, "under sudo, run the command as root instead of as the user who ran sudo")
	return c
}

func runRun(ctx context.Context, s *streams, o *runOptions) error {
	if len(o.argv) == 0 {
		return fail(errors.New("run: no command to measure"), "usage: exopower run [flags] -- COMMAND [ARGS...]")
	}
	if err := o.check(); err != nil {
		return err
	}
	if err := checkOutputPath(o.output); err != nil {
		return err
	}
	id, err := commandIdentity(o.asRoot, s.Getenv, s.Environ())
	if err != nil {
		return err
	}
	path, err := lookCommand(o.argv[0])
	if err != nil {
		return err
	}
	if id.note != "" {
		fmt.Fprintf(s.Err, "exopower: note: %s\n", id.note)
	}

	// A signal while powermetrics starts ends the run before the command
	// starts; one after that is forwarded to the command.
	startCtx, stopStart := cancelOnSignal(ctx, s.Signals)
	smp, err := startMeasuring(startCtx, o.powermetricsPath(s.Getenv), o.interval, "exopower run -- "+shellQuote(o.argv))
	if err != nil {
		stopStart()
		return err
	}
	span := smp.Begin(startCtx, nil)
	if stopStart() {
		smp.Stop()
		return fail(errors.New("interrupted before the command started; it was not run"))
	}

	cmd := exec.Command(path, o.argv[1:]...)
	cmd.Args[0] = o.argv[0]
	cmd.Env = id.env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = s.In, s.Out, s.Err
	if o.json && o.output == "" {
		// stdout carries the summary; the command's output goes to stderr.
		cmd.Stdout = s.Err
	}
	foreground := foregroundOnTerminal()
	// On a terminal the command shares exopower's process group, so that
	// it can read the terminal and gets Ctrl-C from it as it would
	// without exopower. Elsewhere it gets a group of its own, and
	// exopower forwards signals to the whole group.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: id.cred, Setpgid: !foreground}
	if err := cmd.Start(); err != nil {
		smp.Stop()
		return startFailure(o.argv[0], err)
	}

	type exit struct {
		err error
		at  time.Time
	}
	exited := make(chan exit, 1)
	go func() {
		err := cmd.Wait()
		exited <- exit{err, time.Now()}
	}()
	abortCtx, abort := context.WithCancel(context.Background())
	defer abort()
	signals := 0
	var done exit
	for waiting := true; waiting; {
		select {
		case done = <-exited:
			waiting = false
		case sig := <-s.Signals:
			signals++
			if signals == 1 {
				forward(cmd.Process.Pid, sig.(syscall.Signal), foreground)
				fmt.Fprintf(s.Err, "exopower: %v: waiting for the command to end; again to stop at once\n", sig)
				continue
			}
			// A second signal: the user wants out now. The command goes,
			// and the summary is of what was measured so far.
			kill(cmd.Process.Pid, foreground)
			abort()
		}
	}

	res := smp.End(abortCtx, span, done.at)
	if stopErr := smp.Stop(); stopErr != nil {
		res.Warnings = append(res.Warnings, "powermetrics: "+stopErr.Error())
	}
	sum := newSummary(res, span.Start, o.interval)
	sum.Command = o.argv
	status, sigName := exitStatus(cmd.ProcessState)
	sum.ExitCode = &status
	if sigName != "" {
		sum.Signal = &sigName
	}
	if signals > 1 {
		sum.Warnings = append(sum.Warnings, "interrupted twice: the command was killed and the wait for the last window cut short")
	}
	if err := writeSummary(s, sum, &o.commonOptions, o.output, id); err != nil {
		return err
	}
	if signals > 1 {
		return &statusError{code: exitInterrupted}
	}
	if status != 0 {
		return &statusError{code: status}
	}
	return nil
}

// writeSummary puts the summary where the flags say: a file (-o), stdout
// as JSON (--json), or stderr for people.
func writeSummary(s *streams, sum *Summary, o *commonOptions, output string, id identity) error {
	if output != "" {
		asJSON := o.json || strings.EqualFold(filepath.Ext(output), ".json")
		err := writeFileAtomic(output, func(w io.Writer) error {
			if asJSON {
				return writeJSON(w, sum)
			}
			writeText(w, sum, &styles{plain: true})
			return nil
		}, id.cred)
		if err != nil {
			// The measurement is not lost: it goes to stderr instead.
			writeText(s.Err, sum, newStyles(s.Err, s.ErrTTY, s.Getenv))
			return fail(fmt.Errorf("write %s: %w", output, err), "the summary above was not saved; choose a path you can write to with -o")
		}
		return nil
	}
	if o.json {
		return writeJSON(s.Out, sum)
	}
	writeText(s.Err, sum, newStyles(s.Err, s.ErrTTY, s.Getenv))
	return nil
}

// checkOutputPath refuses, before anything starts, an -o path that can be
// seen now never to take the summary: one that names a directory, or whose
// directory is missing or not writable. A failure at the end is still
// possible (the directory may go away while the command runs), and is
// handled where the summary is written.
func checkOutputPath(path string) error {
	if path == "" {
		return nil
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fail(fmt.Errorf("-o %s is a directory", path), "name a file, such as "+filepath.Join(path, "summary.json"))
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fail(fmt.Errorf("-o %s: directory %s does not exist", path, dir), "create it first, or choose another path")
	case err != nil:
		return fail(fmt.Errorf("-o %s: %w", path, err), "choose another path")
	case !fi.IsDir():
		return fail(fmt.Errorf("-o %s: %s is not a directory", path, dir), "choose another path")
	}
	if err := syscall.Access(dir, 2 /* W_OK */); err != nil {
		return fail(fmt.Errorf("-o %s: cannot write in %s: %w", path, dir, err), "choose a path you can write to")
	}
	return nil
}

// writeFileAtomic writes a file through a temporary file beside it and a
// rename, so that the path holds the whole summary or what it held
// before, never part of it. Under sudo the file goes to the invoking user.
func writeFileAtomic(path string, write func(io.Writer) error, owner *syscall.Credential) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := write(f); err != nil {
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	if owner != nil {
		if err := f.Chown(int(owner.Uid), int(owner.Gid)); err != nil {
			return err
		}
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// lookCommand finds the command as exec would, so that a missing or
// unusable command is reported before powermetrics starts.
func lookCommand(name string) (string, error) {
	path, err := exec.LookPath(name)
	switch {
	case err == nil:
		return path, nil
	case errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist):
		return "", &statusError{code: 127, err: fmt.Errorf("%s: command not found", name)}
	}
	return "", &statusError{code: 126, err: fmt.Errorf("%s: cannot execute: %v", name, unwrapAll(err))}
}

// startFailure maps a failed start of the command to 126 or 127.
func startFailure(name string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return &statusError{code: 127, err: fmt.Errorf("%s: command not found", name)}
	}
	return &statusError{code: 126, err: fmt.Errorf("%s: cannot execute: %v", name, unwrapAll(err))}
}

func unwrapAll(err error) error {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err
		}
		err = u
	}
}

// exitStatus returns the status exopower exits with for the command, and
// the name of the signal that ended it, if one did.
func exitStatus(ps *os.ProcessState) (int, string) {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), unix.SignalName(ws.Signal())
	}
	return ps.ExitCode(), ""
}

// foregroundOnTerminal reports whether exopower runs in the foreground of
// a terminal, where Ctrl-C reaches every process of its group.
func foregroundOnTerminal() bool {
	tty, err := os.Open("/dev/tty")
	if err != nil {
		return false
	}
	defer tty.Close()
	pgrp, err := unix.IoctlGetInt(int(tty.Fd()), unix.TIOCGPGRP)
	return err == nil && pgrp == unix.Getpgrp()
}

// forward passes a signal that exopower received on to the command. A
// Ctrl-C at the terminal has reached a foreground command already: sending
// it again would interrupt its clean-up.
func forward(pid int, sig syscall.Signal, foreground bool) {
	switch {
	case !foreground:
		syscall.Kill(-pid, sig)
	case sig != syscall.SIGINT:
		syscall.Kill(pid, sig)
	}
}

func kill(pid int, foreground bool) {
	if foreground {
		syscall.Kill(pid, syscall.SIGKILL)
		return
	}
	syscall.Kill(-pid, syscall.SIGKILL)
}
