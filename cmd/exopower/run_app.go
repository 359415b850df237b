package main

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/exopower/exopower/internal/apps"
	"github.com/exopower/exopower/internal/attrib"
	"github.com/exopower/exopower/internal/cli"
	"github.com/exopower/exopower/internal/safe"
	"github.com/exopower/exopower/internal/sampler"
	"github.com/exopower/exopower/internal/wire"
)

// errAppNodes refuses --app over several Macs.
var errAppNodes = errors.New("--app reads this Mac's processes: not with --node")

// checkApp refuses an --app that can be no app's name, before anything
// starts.
func checkApp(name string, given bool) error {
	if !given {
		return nil
	}
	if why := apps.CheckName(name); why != "" {
		return cli.Fail(fmt.Errorf("--app %s: %s", safe.Text(name), why), "give the app's name as exopower top shows it, such as --app Safari")
	}
	return nil
}

// appRun is run --app: the whole Mac's apps read at the command's start
// and again at each window of its span, as exopower top reads them, and
// one app's energy over the span. The windows are queued by the
// sampler's goroutine (watch) and read by one of its own (loop), so that
// the stream is not held up by a read of every process. A nil appRun
// (no --app) does nothing.
type appRun struct {
	k attrib.Kernel
	p *apps.Poller

	mu     sync.Mutex
	queue  []apps.Reading // the windows not read yet, in order
	closed bool           // no window comes after those queued
	wake   chan struct{}
	done   chan struct{} // closed when loop has read the last window

	pmu    sync.Mutex // the Poller and the span: loop's, and end's
	name   string
	sp     *apps.Span
	failed error // the first read that failed
}

// beginApp opens the kernel's accounting for --app before anything
// starts, so that a Mac without energy per process is told so before the
// command runs; nil without --app.
func beginApp(name string, given bool) (*appRun, error) {
	if !given {
		return nil, nil
	}
	k, d, err := openAppsKernel("--app")
	if err != nil {
		return nil, err
	}
	return &appRun{k: k, p: apps.New(k, d, apps.Config{AllUsers: os.Geteuid() == 0}), name: name, wake: make(chan struct{}, 1), done: make(chan struct{})}, nil
}

// watch is the span's onWindow: also, then, more, where more is not nil.
func (a *appRun) watch(more func(sampler.Window, sampler.Totals)) func(sampler.Window, sampler.Totals) {
	if a == nil {
		return more
	}
	return func(w sampler.Window, tot sampler.Totals) {
		a.mu.Lock()
		a.queue = append(a.queue, apps.Reading{At: w.End, Energy: tot.Energy, Has: tot.Has})
		a.mu.Unlock()
		a.poke()
		if more != nil {
			more(w, tot)
		}
	}
}

// poke wakes loop; a wake-up it has not taken yet is the same.
func (a *appRun) poke() {
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// start reads every process once at the span's start, where each counts
// from, and reads them again at each window from then on.
func (a *appRun) start(at time.Time) error {
	if a == nil {
		return nil
	}
	if err := a.p.Start(apps.Reading{At: at}); err != nil {
		return cli.Fail(fmt.Errorf("--app: reading the processes: %w", err), "run without --app to measure the whole Mac alone")
	}
	a.sp = a.p.OpenSpan(a.name, at)
	go a.loop()
	return nil
}

// loop reads the processes at each window queued, until none will come.
func (a *appRun) loop() {
	defer close(a.done)
	for range a.wake {
		a.mu.Lock()
		queue, closed := a.queue, a.closed
		a.queue = nil
		a.mu.Unlock()
		a.pmu.Lock()
		for _, r := range queue {
			if err := a.p.Round(r); err != nil && a.failed == nil {
				a.failed = err
			}
			a.sp.Add(a.p)
		}
		a.pmu.Unlock()
		if closed {
			return
		}
	}
}

// end ends the app's span where the command ended: a window that begins
// after it is none of the span's.
func (a *appRun) end(at time.Time) {
	if a == nil || a.sp == nil {
		return
	}
	a.pmu.Lock()
	a.sp.End(at)
	a.pmu.Unlock()
}

// finish waits for loop to read the windows queued, the last ones, once
// the stream has stopped (no window comes after), and puts the app's
// energy over the span in sum.
func (a *appRun) finish(sum *wire.Summary, end time.Time) {
	if a == nil || a.sp == nil {
		return
	}
	a.stop()
	var warnings []string
	sum.App, warnings = a.sp.Wire(a.p)
	if a.failed != nil {
		warnings = append(warnings, "the processes could not be read at every window ("+a.failed.Error()+"): the app's energy of the windows not read is counted at the next read, where one came")
	}
	if last := a.sp.Last(); !a.sp.Covered() && last.Before(end) {
		warnings = append(warnings, fmt.Sprintf("the app's figures stop at the last read of the processes, %v before the command's end: no window after it came", end.Sub(last).Round(time.Millisecond)))
	}
	for _, w := range warnings {
		sum.Warnings = append(sum.Warnings, "--app: "+w)
	}
}

// Close ends loop, where finish has not, and releases the kernel's
// accounting, on any path.
func (a *appRun) Close() {
	if a == nil {
		return
	}
	if a.sp != nil {
		a.stop()
	}
	a.k.Close()
}

// stop has loop read the windows queued and end: none comes after them.
func (a *appRun) stop() {
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
	a.poke()
	<-a.done
}
