package serve

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/exopower/exopower/internal/apps"
	"github.com/exopower/exopower/internal/safe"
	"github.com/exopower/exopower/internal/sampler"
	"github.com/exopower/exopower/internal/wire"
)

// Spans that name an app (?app=NAME) carry the app's energy over the
// span, from the rounds of --apps' Poller: a span costs a lookup of its
// app at each round, no read of its own, so that such spans are bounded
// by MaxOpenSpans alone, not by the MaxProcessSpans of those that follow
// a process. Who may open one is who may follow a process (roles.go):
// the app's activity is what a span that names its process would tell.

// roundWait bounds the wait of a span's end for --apps' round of the
// window that covers it, which follows the window by the time a read of
// the processes takes (a millisecond or so): a round that takes this
// long is stuck, and the end's answer has the interval + 11 s to be
// written (HTTPServer's WriteTimeout), the window's wait taking up to
// the interval + 1 s of it.
const roundWait = 5 * time.Second

// appNamed is the app that r names with ?app=, "" where it names none;
// an error (a *treeError) where it cannot be measured, or r may not ask.
func (s *Server) appNamed(r *http.Request) (string, error) {
	arg, named := r.URL.Query()["app"]
	if !named {
		return "", nil
	}
	if len(arg) != 1 {
		return "", &treeError{http.StatusBadRequest, fmt.Sprintf("%d apps named (?app=): a span names one", len(arg))}
	}
	if why := apps.CheckName(arg[0]); why != "" {
		return "", &treeError{http.StatusBadRequest, fmt.Sprintf("app=%s: %s", safe.Text(arg[0]), why)}
	}
	if why := s.refuseProcesses(r, "an app (?app=)"); why != "" {
		return "", &treeError{http.StatusForbidden, why}
	}
	a := s.apps
	if a == nil {
		return "", &treeError{http.StatusNotImplemented, "this serve counts no app's energy: spans that name an app (?app=) need serve to be started with --apps"}
	}
	a.pmu.Lock()
	defer a.pmu.Unlock()
	switch {
	case a.failure != "":
		return "", &treeError{http.StatusNotImplemented, "serve --apps could not read the processes (" + a.failure + "): it measures no app's energy, and no span that names an app (?app=)"}
	case !a.ready:
		return "", &treeError{http.StatusServiceUnavailable, "serve --apps has not read the processes yet (it does at the stream's first window): try again in a moment"}
	}
	return arg[0], nil
}

// openApp begins the span of the app name, which starts at start on the
// windows' timeline; nil where name is "".
func (s *Server) openApp(name string, start time.Time) *apps.Span {
	if name == "" {
		return nil
	}
	a := s.apps
	a.pmu.Lock()
	defer a.pmu.Unlock()
	sp := a.cfg.Poller.OpenSpan(name, start)
	a.spans[sp] = true
	return sp
}

// closeApp ends sp, whose figures nobody reads: rounds no longer count
// it.
func (s *Server) closeApp(sp *apps.Span) {
	if sp == nil {
		return
	}
	s.apps.pmu.Lock()
	delete(s.apps.spans, sp)
	s.apps.pmu.Unlock()
}

// roundOfSpans reads the processes over the windows up to t's, and
// hands the round to every span that names an app; those waiting for it
// are woken.
func (a *appsState) roundOfSpans(t sampler.StreamTotals) error {
	a.pmu.Lock()
	defer a.pmu.Unlock()
	err := a.cfg.Poller.Round(apps.Reading{At: t.Last.End, Energy: t.Energy, Has: t.Has})
	for sp := range a.spans {
		sp.Add(a.cfg.Poller)
	}
	a.read = t.Windows
	close(a.tick)
	a.tick = make(chan struct{})
	return err
}

// appReading is the app's figures of o's span so far, or, ended (at
// end), in all: once the Poller has read every window that the span's
// own figures read (End waited for the one that covers its end), so
// that the app's last round is the first at or after the end, as the
// node's window is. A ctx that ends, or --apps that stops, cuts that
// wait short.
func (s *Server) appReading(ctx context.Context, o *openSpan, end *time.Time) (*wire.App, []string) {
	sp := o.app
	if sp == nil {
		return nil, nil
	}
	a := s.apps
	if end == nil {
		a.pmu.Lock()
		defer a.pmu.Unlock()
		return sp.Wire(a.cfg.Poller)
	}
	n := s.meter.Totals().Windows
	a.pmu.Lock()
	defer a.pmu.Unlock()
	sp.End(*end)
	whole := a.await(ctx, sp, n)
	delete(a.spans, sp)
	app, warnings := sp.Wire(a.cfg.Poller)
	if last := sp.Last(); !whole && last.Before(*end) {
		warnings = append(warnings, fmt.Sprintf("the app's figures stop at the last read of the processes, %v before the span's end: the next did not come in time",
			end.Sub(last).Round(time.Millisecond)))
	}
	return app, warnings
}

// await waits, pmu held, until the rounds have read the first n windows
// or sp is covered, and reports whether they have. A ctx that ends,
// rounds that stop, or roundWait without a round end the wait.
func (a *appsState) await(ctx context.Context, sp *apps.Span, n int) bool {
	a.waiting++
	defer func() { a.waiting-- }()
	timer := time.NewTimer(roundWait)
	defer timer.Stop()
	for a.read < n && !sp.Covered() {
		tick := a.tick
		a.pmu.Unlock()
		var late bool
		select {
		case <-tick:
		case <-ctx.Done():
		case <-a.stopped:
		case <-timer.C:
			late = true
		}
		a.pmu.Lock()
		if late || ctx.Err() != nil || isClosed(a.stopped) {
			return a.read >= n || sp.Covered()
		}
	}
	return true
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
