package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"strings"

	"github.com/exopower/exopower/internal/powermetrics"
	"github.com/exopower/exopower/internal/sampler"
)

// startMeasuring starts powermetrics and waits for its first sample, so
// that nothing is started before measurement is known to work. rerun is
// the exopower command line, for hints.
func startMeasuring(ctx context.Context, path string, cfg sampler.Config, rerun string) (*sampler.Sampler, error) {
	p, err := powermetrics.Start(powermetrics.Options{Path: path, Interval: cfg.Interval})
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
			return nil, fail(fmt.Errorf("powermetrics not found at %s", path),
				"exopower measures Apple Silicon Macs, where macOS has "+powermetrics.DefaultPath,
				"to try exopower elsewhere, point --powermetrics or EXOPOWER_POWERMETRICS at a stand-in (see the README)")
		}
		return nil, fail(err)
	}
	s := sampler.Start(p, cfg)
	if err := s.Ready(ctx); err != nil {
		stopErr := s.Stop()
		return nil, notReady(err, stopErr, rerun)
	}
	return s, nil
}

// notReady explains why powermetrics gave no first sample.
func notReady(err, stopErr error, rerun string) error {
	var ee *powermetrics.ExitError
	if errors.As(stopErr, &ee) {
		if strings.Contains(strings.ToLower(ee.Stderr), "superuser") {
			return fail(fmt.Errorf("powermetrics needs root: %v", stopErr),
				"run exopower with sudo: sudo "+rerun)
		}
		return fail(fmt.Errorf("powermetrics failed before its first sample: %v", stopErr),
			"check that powermetrics works on its own: sudo powermetrics -n 1 -i 1000 -s cpu_power")
	}
	var ns *sampler.NoSampleError
	switch {
	case errors.Is(err, powermetrics.ErrNoPowerData):
		return fail(fmt.Errorf("powermetrics: %w", err),
			"exopower needs an Apple Silicon Mac itself: a virtual machine has no power data")
	case errors.Is(err, powermetrics.ErrIntel):
		return fail(fmt.Errorf("powermetrics: %w", err))
	case errors.As(err, &ns):
		return fail(err, "check that powermetrics works on its own: sudo powermetrics -n 1 -i 1000 -s cpu_power")
	case errors.Is(err, context.Canceled):
		return fail(errors.New("interrupted before powermetrics's first sample; nothing was started"))
	}
	return fail(err)
}
