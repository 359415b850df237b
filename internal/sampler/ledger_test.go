package sampler

import (
	"context"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/power"
)

// Spans open at once over one stream each read their own stretch of the
// ledger: a baseline, a run inside it, and one that outlives both.
func TestSpansOpenAtOnceReadTheirOwnStretch(t *testing.T) {
	f := newFeed()
	s := Start(f, Config{Source: "powermetrics", Interval: 100 * time.Millisecond, Now: f.Now, Grace: time.Hour})
	defer s.Stop()
	outer := begin(t, f, s, 1000) // the first window is [900, 1000] at 1 W
	f.ch <- item{s: smp(1, 1100, 100, 10)}
	f.ch <- item{s: smp(2, 1200, 100, 20)}
	placed(t, s, 3)
	f.set(at(1250))
	inner := s.Begin(context.Background(), nil)
	f.ch <- item{s: smp(3, 1300, 100, 30)}
	f.ch <- item{s: smp(4, 1400, 100, 40)}
	r := s.End(context.Background(), inner, at(1350))
	// 30 W for 50 ms, 40 W for 50 ms.
	if want := 1.5 + 2.0; !near(r.Energy.Total, want, 1e-9) || r.Samples != 2 || r.Peak.Total != 40 || r.Coverage != 1 {
		t.Errorf("inner span: %v J, %d samples, peak %v W, coverage %v; want %v J, 2, 40 W, 1", r.Energy.Total, r.Samples, r.Peak.Total, r.Coverage, want)
	}
	r = s.End(context.Background(), outer, at(1400))
	if want := 1 + 2 + 3 + 4.0; !near(r.Energy.Total, want, 1e-9) || r.Samples != 4 || r.Peak.Total != 40 {
		t.Errorf("outer span: %v J, %d samples, peak %v W; want %v J, 4, 40 W", r.Energy.Total, r.Samples, r.Peak.Total, want)
	}
}

// Windows that arrived before a span was closed, but start at or after
// its end, do not count in its peak or samples.
func TestWindowsAfterTheEndAreTakenBack(t *testing.T) {
	f := newFeed()
	s := Start(f, Config{Source: "powermetrics", Interval: 100 * time.Millisecond, Now: f.Now})
	defer s.Stop()
	sp := begin(t, f, s, 1000)
	f.ch <- item{s: smp(1, 1100, 100, 10)}
	f.ch <- item{s: smp(2, 1200, 100, 20)}
	f.ch <- item{s: smp(3, 1300, 100, 90)}
	placed(t, s, 4)
	r := s.End(context.Background(), sp, at(1200))
	if !near(r.Energy.Total, 3, 1e-9) || r.Samples != 2 || r.Peak.Total != 20 {
		t.Errorf("%v J, %d samples, peak %v W; want 3 J, 2 and 20 W", r.Energy.Total, r.Samples, r.Peak.Total)
	}
}

// E(t) inside the gap a lost document left follows the bridge between
// the windows on either side, so that a span that ends in the gap counts
// the part of the bridge it holds and no more.
func TestTheLedgerBridgesAGapLinearly(t *testing.T) {
	var l ledger
	l.add(Window{Start: at(0), End: at(100), Power: power.Values{Total: 10}})
	l.add(Window{Start: at(200), End: at(300), Power: power.Values{Total: 30}})
	for _, c := range []struct {
		at   float64
		want float64
	}{
		{-50, 0},
		{50, 0.5},
		{100, 1},
		{150, 1 + 0.05*15}, // halfway up the bridge, from 10 W to 20 W
		{200, 1 + 2},
		{250, 1 + 2 + 1.5},
		{400, 1 + 2 + 3},
	} {
		x, ok := l.at(at(c.at))
		if !ok || !near(x.energy().Total, c.want, 1e-12) {
			t.Errorf("E(%v ms) = %v J (%v), want %v J", c.at, x.energy().Total, ok, c.want)
		}
	}
	if x, _ := l.at(at(150)); x.covered != ms(100) {
		t.Errorf("C(150 ms) = %v, want 100ms: the bridge is not covered", x.covered)
	}
}
