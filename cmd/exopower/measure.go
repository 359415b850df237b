package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"strings"

	"github.com/exopower/exopower/internal/powermetrics"
	"github.com/exopower/exopower/internal/sampler"
)

// startMeasuring starts powermetrics and waits for its first sample, so
// that nothing is started before measurement is known to work. rerun is
// the exopower command line, for hints.
//
// powermetrics needs root. Without it, exopower runs powermetrics through
// sudo -n where sudoers lets the user run it without a password; -n makes
// sure that sudo never prompts behind the user's back. Otherwise it fails
// with powermetrics's own message and the two ways to fix it.
func startMeasuring(ctx context.Context, path string, cfg sampler.Config, rerun string) (*sampler.Sampler, error) {
	smp, err := tryStart(ctx, path, nil, cfg)
	if err == nil || os.Geteuid() == 0 || !needsRoot(err) {
		return smp, explainStart(err, path, rerun)
	}
	sudo, lookErr := exec.LookPath("sudo")
	if lookErr != nil {
		return nil, rootHints(err, "", path, rerun)
	}
	smp, sudoErr := tryStart(ctx, path, []string{sudo, "-n"}, cfg)
	if sudoErr == nil {
		return smp, nil
	}
	return nil, rootHints(err, sudoErr.Error(), path, rerun)
}

// startError is powermetrics failing to give a first sample: why the wait
// ended, and how powermetrics itself ended.
type startError struct {
	err  error
	exit error // nil, or how powermetrics ended (*powermetrics.ExitError)
}

func (e *startError) Error() string {
	if e.exit != nil {
		return e.exit.Error()
	}
	return e.err.Error()
}

func (e *startError) Unwrap() []error { return []error{e.err, e.exit} }

func tryStart(ctx context.Context, path string, prefix []string, cfg sampler.Config) (*sampler.Sampler, error) {
	p, err := powermetrics.Start(powermetrics.Options{Path: path, Interval: cfg.Interval, Prefix: prefix})
	if err != nil {
		return nil, err
	}
	s := sampler.Start(p, cfg)
	if err := s.Ready(ctx); err != nil {
		return nil, &startError{err: err, exit: s.Stop()}
	}
	return s, nil
}

// needsRoot reports whether powermetrics refused for want of root.
func needsRoot(err error) bool {
	var ee *powermetrics.ExitError
	return errors.As(err, &ee) && strings.Contains(strings.ToLower(ee.Stderr), "superuser")
}

func rootHints(err error, sudoSaid, path, rerun string) error {
	name := "USERNAME"
	if u, uerr := user.Current(); uerr == nil {
		name = u.Username
	}
	// sudoers takes absolute paths only.
	if abs, lerr := exec.LookPath(path); lerr == nil && strings.HasPrefix(abs, "/") {
		path = abs
	}
	msg := fmt.Sprintf("powermetrics needs root: %v", err)
	if sudoSaid != "" {
		msg += fmt.Sprintf("; sudo -n did not run it either: %s", sudoSaid)
	}
	return fail(errors.New(msg),
		"run exopower with sudo: sudo "+rerun,
		fmt.Sprintf("or let %s run powermetrics through sudo without a password: add this line with sudo visudo -f /etc/sudoers.d/powermetrics:", name),
		fmt.Sprintf("  %s ALL=(root) NOPASSWD: %s", name, path))
}

// explainStart turns a failure to start into a message and hints.
func explainStart(err error, path, rerun string) error {
	if err == nil {
		return nil
	}
	var ns *sampler.NoSampleError
	var ee *powermetrics.ExitError
	check := "check that powermetrics works on its own: sudo powermetrics -n 1 -i 1000 -s cpu_power"
	switch {
	case errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist):
		return fail(fmt.Errorf("powermetrics not found at %s", path),
			"exopower measures Apple Silicon Macs, where macOS has "+powermetrics.DefaultPath,
			"to try exopower elsewhere, point --powermetrics or EXOPOWER_POWERMETRICS at a stand-in (see the README)")
	case needsRoot(err):
		return rootHints(err, "", path, rerun)
	case errors.Is(err, powermetrics.ErrNoPowerData):
		return fail(fmt.Errorf("powermetrics: %w", unwrapStart(err)),
			"exopower needs an Apple Silicon Mac itself: a virtual machine has no power data")
	case errors.Is(err, powermetrics.ErrIntel):
		return fail(fmt.Errorf("powermetrics: %w", unwrapStart(err)))
	case errors.As(err, &ee):
		return fail(fmt.Errorf("powermetrics failed before its first sample: %v", ee), check)
	case errors.As(err, &ns):
		return fail(ns, check)
	case errors.Is(err, context.Canceled):
		return fail(errors.New("interrupted before powermetrics's first sample; nothing was started"))
	}
	return fail(unwrapStart(err), check)
}

func unwrapStart(err error) error {
	var se *startError
	if errors.As(err, &se) {
		return se.err
	}
	return err
}
