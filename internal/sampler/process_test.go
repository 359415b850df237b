package sampler

import (
	"cmp"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/fakepm"
	"github.com/exopower/exopower/internal/powermetrics"
)

// The test binary doubles as the fake powermetrics: run with
// EXOPOWER_TEST_FAKEPM=1, it is the fake and nothing else.
func TestMain(m *testing.M) {
	if os.Getenv("EXOPOWER_TEST_FAKEPM") == "1" {
		os.Exit(fakepm.Main(os.Args[1:], os.Stdout, os.Stderr, os.Getenv))
	}
	os.Exit(m.Run())
}

// startFake runs the fake powermetrics as a real subprocess.
func startFake(t *testing.T, interval time.Duration, env ...string) (*powermetrics.Process, string) {
	t.Helper()
	pidfile := filepath.Join(t.TempDir(), "pid")
	t.Setenv("EXOPOWER_TEST_FAKEPM", "1")
	t.Setenv("FAKEPM_PIDFILE", pidfile)
	for i := 0; i+1 < len(env); i += 2 {
		t.Setenv(env[i], env[i+1])
	}
	p, err := powermetrics.Start(powermetrics.Options{Path: cmp.Or(fakepm.Plain(), os.Args[0]), Interval: interval})
	if err != nil {
		t.Fatal(err)
	}
	return p, pidfile
}

// runFor measures a span of n windows of the fake and returns the result
// and the profile's true energy over the span, by the wall clock.
func runFor(t *testing.T, profile string, n int, cfg Config, env ...string) (Result, float64) {
	t.Helper()
	prof, err := fakepm.ParseProfile(profile)
	if err != nil {
		t.Fatal(err)
	}
	p, pidfile := startFake(t, 100*time.Millisecond, append([]string{"FAKEPM_PROFILE", profile}, env...)...)
	windows := make(chan struct{}, 1024)
	cfg.Interval = 100 * time.Millisecond
	s := Start(p, cfg)
	ctx := context.Background()
	if err := s.Ready(ctx); err != nil {
		s.Stop()
		t.Fatal(err)
	}
	sp := s.Begin(ctx, func(Window, Totals) { windows <- struct{}{} })
	for i := 0; i < n; i++ {
		<-windows
	}
	end := time.Now()
	r := s.End(ctx, sp, end)
	if err := s.Stop(); err != nil {
		t.Errorf("stopping the fake: %v", err)
	}
	fakepm.AssertGone(t, pidfile)
	return r, prof.Energy(sp.Start, end).Total()
}

func TestFakePowermetricsEndToEndWithRequests(t *testing.T) {
	r, truth := runFor(t, fakepm.DefaultProfile, 15, Config{Source: "powermetrics"})
	t.Logf("measured %.4f J over %v, true %.4f J", r.Energy.Total, r.Duration, truth)
	if e := relErr(r.Energy.Total, truth); e > 0.01 {
		t.Errorf("energy %.4f J, true %.4f J: off by %.2f%%, want within 1%%", r.Energy.Total, truth, 100*e)
	}
	if r.Coverage != 1 || len(r.Warnings) != 0 || r.HWModel != "MacBookPro17,1" {
		t.Errorf("coverage %v, warnings %q, model %q", r.Coverage, r.Warnings, r.HWModel)
	}
}

func TestFakePowermetricsEndToEndWithoutRequests(t *testing.T) {
	r, truth := runFor(t, "0=9.5,2,0.75", 8, Config{Source: "powermetrics"}, "FAKEPM_MODE", "ignore-signal")
	if e := relErr(r.Energy.Total, truth); e > 0.01 {
		t.Errorf("energy %.4f J, true %.4f J: off by %.2f%%, want within 1%%", r.Energy.Total, truth, 100*e)
	}
}

func TestFakePowermetricsDyingMidSpan(t *testing.T) {
	p, pidfile := startFake(t, 50*time.Millisecond, "FAKEPM_MODE", "die-after=4,ignore-signal")
	s := Start(p, Config{Source: "powermetrics", Interval: 50 * time.Millisecond})
	ctx := context.Background()
	if err := s.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	sp := s.Begin(ctx, nil)
	<-p.Exited()
	r := s.End(ctx, sp, time.Now().Add(time.Second))
	err := s.Stop()
	var ee *powermetrics.ExitError
	if !errors.As(err, &ee) || ee.Code != 3 || !strings.Contains(ee.Error(), "IOReportCreateSubscription failed") {
		t.Errorf("Stop = %v, want exit status 3 with the fake's stderr", err)
	}
	if !r.Ended || r.Coverage >= 1 || r.Energy.Total <= 0 {
		t.Errorf("ended %v, coverage %v, energy %v J: want what was measured, flagged", r.Ended, r.Coverage, r.Energy.Total)
	}
	fakepm.AssertGone(t, pidfile)
}
