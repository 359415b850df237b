package powermetrics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"time"

	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/power"
)

// LaunchOptions says how to launch powermetrics for a measurement.
type LaunchOptions struct {
	Options
	// ReadyTimeout bounds the wait for the first sample; 5 s plus two
	// intervals when zero.
	ReadyTimeout time.Duration
	// Rerun is the exopower command line the user typed, for the hint
	// that runs it again under sudo.
	Rerun string
}

// Launch starts powermetrics and waits for its first sample, so that
// nothing is started before measurement is known to work; Next returns
// that sample first. It fails with a *cli.Error that says what went
// wrong and how to fix it.
//
// powermetrics needs root. Without it, Launch runs powermetrics through
// sudo -n where sudoers lets the user run it without a password; -n makes
// sure that sudo never prompts behind the user's back. Otherwise it fails
// with powermetrics's own message and the two ways to fix it.
func Launch(ctx context.Context, opts LaunchOptions) (*Process, error) {
	if opts.Path == "" {
		opts.Path = DefaultPath
	}
	if opts.ReadyTimeout == 0 {
		opts.ReadyTimeout = 5*time.Second + 2*opts.Interval
	}
	p, err := launch(ctx, opts)
	if err == nil || os.Geteuid() == 0 || !needsRoot(err) {
		return p, explain(err, opts)
	}
	sudo, lookErr := exec.LookPath("sudo")
	if lookErr != nil {
		return nil, rootHints(err, "", opts)
	}
	opts.Prefix = []string{sudo, "-n"}
	p, sudoErr := launch(ctx, opts)
	if sudoErr == nil {
		return p, nil
	}
	return nil, rootHints(err, sudoErr.Error(), opts)
}

// launch starts powermetrics once and waits for its first sample.
func launch(ctx context.Context, opts LaunchOptions) (*Process, error) {
	p, err := Start(opts.Options)
	if err != nil {
		return nil, err
	}
	type first struct {
		s   power.Sample
		err error
	}
	got := make(chan first, 1)
	go func() {
		for {
			s, err := p.Next()
			if err == nil || EndsStream(err) || errors.Is(err, ErrNoPowerData) || errors.Is(err, ErrIntel) {
				got <- first{s, err}
				return
			}
			// A refused document before the first: the wait goes on.
		}
	}()
	timer := time.NewTimer(opts.ReadyTimeout)
	defer timer.Stop()
	var f first
	select {
	case f = <-got:
	case <-timer.C:
		f.err = &power.NoSampleError{Source: "powermetrics", Waited: opts.ReadyTimeout}
	case <-ctx.Done():
		f.err = ctx.Err()
	}
	if f.err == nil {
		p.first = &f.s
		return p, nil
	}
	exit := p.Stop()
	if f.err == ctx.Err() || errors.As(f.err, new(*power.NoSampleError)) {
		<-got // Stop closed the pipe, which ends the read
	}
	switch {
	case errors.Is(f.err, ErrNoPowerData) || errors.Is(f.err, ErrIntel) || f.err == ctx.Err():
		return nil, f.err
	case exit != nil:
		return nil, exit
	case f.err == io.EOF:
		return nil, errEndedEarly
	case EndsStream(f.err) && !errors.As(f.err, new(*power.NoSampleError)):
		return nil, fmt.Errorf("%w: %w", errEndedEarly, f.err)
	}
	return nil, f.err
}

var errEndedEarly = errors.New("powermetrics ended before its first sample")

// needsRoot reports whether powermetrics refused for want of root.
func needsRoot(err error) bool {
	var ee *ExitError
	return errors.As(err, &ee) && strings.Contains(strings.ToLower(ee.Stderr), "superuser")
}

// checkAlone is the step that tells a broken powermetrics from exopower.
const checkAlone = "check that powermetrics works on its own: sudo powermetrics -n 1 -i 1000 -s cpu_power"

// explain turns a failure to launch into a message and hints.
func explain(err error, opts LaunchOptions) error {
	var ee *ExitError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist):
		return cli.Fail(fmt.Errorf("powermetrics not found at %s", opts.Path),
			"exopower measures Apple Silicon Macs, where macOS has "+DefaultPath,
			"to try exopower elsewhere, point --powermetrics or EXOPOWER_POWERMETRICS at a stand-in (see the README)")
	case needsRoot(err):
		return rootHints(err, "", opts)
	case errors.Is(err, ErrNoPowerData):
		return cli.Fail(fmt.Errorf("powermetrics: %w", err), "exopower needs an Apple Silicon Mac itself: a virtual machine has no power data")
	case errors.Is(err, ErrIntel):
		return cli.Fail(fmt.Errorf("powermetrics: %w", err))
	case errors.As(err, &ee):
		return cli.Fail(fmt.Errorf("powermetrics failed before its first sample: %w", ee), checkAlone)
	case errors.Is(err, context.Canceled):
		return cli.Fail(errors.New("interrupted before powermetrics's first sample; nothing was started"))
	case errors.Is(err, context.DeadlineExceeded):
		return cli.Fail(fmt.Errorf("gave up waiting for powermetrics's first sample: %w", err), checkAlone)
	}
	return cli.Fail(err, checkAlone)
}

func rootHints(err error, sudoSaid string, opts LaunchOptions) error {
	name := "USERNAME"
	if u, uerr := user.Current(); uerr == nil {
		name = u.Username
	}
	// sudoers takes absolute paths only.
	path := opts.Path
	if found, lerr := exec.LookPath(path); lerr == nil {
		if abs, aerr := filepath.Abs(found); aerr == nil {
			path = abs
		}
	}
	msg := fmt.Sprintf("powermetrics needs root: %v", err)
	if sudoSaid != "" {
		msg += fmt.Sprintf("; sudo -n did not run it either: %s", sudoSaid)
	}
	return cli.Fail(errors.New(msg),
		"run exopower with sudo: sudo "+opts.Rerun,
		fmt.Sprintf("or let %s run powermetrics through sudo without a password: add this line with sudo visudo -f /etc/sudoers.d/powermetrics:", name),
		fmt.Sprintf("  %s ALL=(root) NOPASSWD: %s", name, path))
}
