package main

import (
	"context"
	"time"

	"github.com/exopower/exopower/internal/powermetrics"
	"github.com/exopower/exopower/internal/sampler"
)

// startMeasuring launches powermetrics, which waits for its first sample
// so that nothing is started before measurement is known to work, and
// starts a Sampler over it. rerun is the exopower command line, for hints.
func startMeasuring(ctx context.Context, path string, interval time.Duration, rerun string) (*sampler.Sampler, error) {
	p, err := powermetrics.Launch(ctx, powermetrics.LaunchOptions{
		Options: powermetrics.Options{Path: path, Interval: interval},
		Rerun:   rerun,
	})
	if err != nil {
		return nil, err
	}
	meter := sampler.Start(p, sampler.Config{Source: "powermetrics", Interval: interval})
	// The first sample is on the ledger before anything else asks: a span
	// begun now waits for the sample it asks for, not for that one.
	if err := meter.Ready(ctx); err != nil {
		meter.Stop()
		return nil, err
	}
	return meter, nil
}

// endMeasuring ends the span at end, stops the stream and returns what was
// measured, with how the stream ended among the warnings.
func endMeasuring(ctx context.Context, meter *sampler.Sampler, span *sampler.Span, end time.Time) sampler.Result {
	res := meter.End(ctx, span, end)
	if err := meter.Stop(); err != nil {
		res.Warnings = append(res.Warnings, "powermetrics: "+err.Error())
	}
	return res
}
