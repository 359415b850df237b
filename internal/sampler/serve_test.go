package sampler

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/power"
	"github.com/exopower/exopower/internal/powermetrics"
)

// A break in the stream (powermetrics died and was started again) is not
// bridged like a lost document: the time until the new stream's first
// window counts neither energy nor coverage, in the stream's totals and
// in a span across it, which says so.
func TestABreakIsNeitherBridgedNorCovered(t *testing.T) {
	f := newFeed()
	s := Start(f, Config{Source: "powermetrics", Interval: 100 * time.Millisecond, Now: f.Now})
	defer s.Stop()
	sp := begin(t, f, s, 1000)
	f.ch <- item{s: smp(1, 1100, 100, 10)}
	f.ch <- item{err: &power.BreakError{Source: "powermetrics", Err: errors.New("exit status 3")}}
	// The new powermetrics's first window: 100 ms ending 2 s later.
	f.ch <- item{s: smp(0, 3100, 100, 30)}
	f.ch <- item{s: smp(1, 3200, 100, 30)}
	r := s.End(context.Background(), sp, at(3200))
	// 10 W for 100 ms, nothing for 1.9 s, then 30 W for 200 ms; a bridge
	// from 10 W to 30 W would have added 38 J.
	if want := 1 + 6.0; !near(r.Energy.Total, want, 1e-9) {
		t.Errorf("energy %v J, want %v J", r.Energy.Total, want)
	}
	if want := 0.3 / 2.2; !near(r.Coverage, want, 1e-9) {
		t.Errorf("coverage %v, want %v", r.Coverage, want)
	}
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "powermetrics stopped and was started again once") ||
		!strings.Contains(r.Warnings[0], "exit status 3") {
		t.Errorf("warnings %q", r.Warnings)
	}
	tot := s.Totals()
	// The stream's first window (1 W for 100 ms, from begin) counts too.
	if want := 0.1 + 1 + 6; !near(tot.Energy.Total, want, 1e-9) || tot.Covered != 400*time.Millisecond || tot.Breaks != 1 || tot.Windows != 4 {
		t.Errorf("totals %+v; want %v J over 400ms in 4 windows, 1 break", tot, want)
	}
}

// A span that starts inside a break reads nothing of it.
func TestASpanThatStartsInABreak(t *testing.T) {
	f := newFeed()
	s := Start(f, Config{Source: "powermetrics", Interval: 100 * time.Millisecond, Now: f.Now})
	defer s.Stop()
	begin(t, f, s, 1000) // the stream's first window ends at 1000
	f.ch <- item{err: &power.BreakError{Source: "powermetrics", Err: errors.New("killed")}}
	f.set(at(1500))
	sp := s.Begin(context.Background(), nil)
	f.ch <- item{s: smp(0, 2100, 100, 20)}
	r := s.End(context.Background(), sp, at(2100))
	if !near(r.Energy.Total, 2, 1e-9) || !near(r.Coverage, 0.1/0.6, 1e-9) {
		t.Errorf("energy %v J, coverage %v; want 2 J and %v", r.Energy.Total, r.Coverage, 0.1/0.6)
	}
}

// Read tells what a span measured so far, up to the newest window, and
// leaves it open: its end reads on from there.
func TestReadLeavesTheSpanOpen(t *testing.T) {
	f := newFeed()
	s := Start(f, Config{Source: "powermetrics", Interval: 100 * time.Millisecond, Now: f.Now})
	defer s.Stop()
	sp := begin(t, f, s, 1000)
	if r := s.Read(sp); r.Samples != 0 || r.Energy.Total != 0 || r.Duration != 0 {
		t.Errorf("before any window: %+v, want nothing", r)
	}
	f.ch <- item{s: smp(1, 1100, 100, 10)}
	f.ch <- item{s: smp(2, 1200, 100, 20)}
	waitWindows(t, s, 3)
	r := s.Read(sp)
	if !near(r.Energy.Total, 3, 1e-9) || r.Duration != 200*time.Millisecond || r.Samples != 2 || r.Coverage != 1 {
		t.Errorf("so far: %+v, want 3 J over 200ms in 2 windows", r)
	}
	f.ch <- item{s: smp(3, 1300, 100, 30)}
	if r := s.End(context.Background(), sp, at(1300)); !near(r.Energy.Total, 6, 1e-9) || r.Samples != 3 {
		t.Errorf("at the end: %+v, want 6 J in 3 windows", r)
	}
}

// Totals count refused documents by their reason, and the newest window.
func TestTotalsCountRefusedDocumentsByReason(t *testing.T) {
	f := newFeed()
	s := Start(f, Config{Source: "powermetrics", Interval: 100 * time.Millisecond, Now: f.Now})
	defer s.Stop()
	begin(t, f, s, 1000)
	f.ch <- item{err: &powermetrics.DocumentError{Index: 1, Err: powermetrics.ErrMalformed}}
	f.ch <- item{err: &powermetrics.DocumentError{Index: 2, Err: powermetrics.ErrImplausible}}
	f.ch <- item{err: &powermetrics.DocumentError{Index: 3, Err: powermetrics.ErrMalformed}}
	f.ch <- item{s: smp(4, 1500, 100, 5)}
	waitWindows(t, s, 2)
	tot := s.Totals()
	if tot.Refused["malformed"] != 2 || tot.Refused["implausible"] != 1 || len(tot.Refused) != 2 {
		t.Errorf("refused %v", tot.Refused)
	}
	if tot.Last.End != at(1500) || tot.Last.Index != 4 || tot.LastArrival != at(1500) {
		t.Errorf("last window %+v, arrival %v", tot.Last, tot.LastArrival)
	}
}

// waitWindows waits until the Sampler has put n windows on its ledger.
func waitWindows(t *testing.T, s *Sampler, n int) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.wait(context.Background(), time.Now().Add(time.Minute), func() bool { return s.book.ledger.n >= n }) {
		t.Fatalf("%d windows, want %d", s.book.ledger.n, n)
	}
}
