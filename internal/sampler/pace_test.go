package sampler

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/powermetrics"
)

// A recording piped into exopower comes all at once; a live stream comes
// at the pace of its windows, two documents at once at most now and then.
// Ready tells them apart for a stream from a pipe.
func TestAStreamFromAPipeThatComesAtOnceIsARecording(t *testing.T) {
	tests := []struct {
		name     string
		fromPipe bool
		arrivals []float64 // ms; every window is 1 s
		began    float64   // ms, when exopower started; 0 if not known
		played   bool
	}{
		{"four documents in one read", true, []float64{1000, 1000, 1000, 1000}, 0, true},
		{"four documents a few reads apart", true, []float64{1000, 1000.2, 1000.9, 1003}, 0, true},
		{"documents at the pace of their windows", true, []float64{1000, 2000, 3001, 4000}, 0, false},
		{"two at once after a delay, then at their pace", true, []float64{1000, 1000, 2000, 3000}, 0, false},
		{"a stream that exopower started is not judged", false, []float64{1000, 1000, 1000, 1000}, 0, false},
		// Four seconds of windows, 30 ms after exopower started.
		{"four documents in one read soon after exopower started", true, []float64{1000, 1000, 1000, 1000}, 970, true},
		// Four seconds of windows, which waited in the pipe while
		// exopower took 4.5 s to start, or 2 s, the least they allow.
		{"four documents that waited while exopower started", true, []float64{1000, 1000, 1000, 1000}, -3500, false},
		{"four documents of twice the time since exopower started", true, []float64{1000, 1000, 1000, 1000}, -1000, false},
		{"four documents of more than twice that", true, []float64{1000, 1000, 1000, 1000}, -999, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFeed()
			cfg := Config{Source: "powermetrics", Interval: time.Second, Now: f.Now, FromPipe: tt.fromPipe}
			if tt.began != 0 {
				cfg.Began = at(tt.began)
			}
			s := Start(f, cfg)
			defer s.Stop()
			for i, a := range tt.arrivals {
				f.ch <- item{s: smp(i, a, 1000, 1)}
			}
			err := s.Ready(context.Background())
			var pe *PlaybackError
			if got := errors.As(err, &pe); got != tt.played || !tt.played && err != nil {
				t.Fatalf("Ready = %v; want a PlaybackError: %v", err, tt.played)
			}
			if tt.played && !strings.Contains(err.Error(), "documents 0 to 3 came within") {
				t.Errorf("Ready = %q", err)
			}
		})
	}
}

// A live stream from a pipe does not wait for four documents: once the
// time in which a recording would have come has passed, it is live, and
// documents that come at once after that are a hiccup of the pipe.
func TestALiveStreamFromAPipeIsReadyBeforeItsFourthDocument(t *testing.T) {
	f := newFeed()
	f.set(at(1000))
	s := Start(f, Config{Source: "powermetrics", Interval: 100 * time.Millisecond, Now: f.Now, FromPipe: true})
	defer s.Stop()
	f.ch <- item{s: smp(0, 1000, 100, 1)}
	if err := s.Ready(context.Background()); err != nil {
		t.Fatalf("Ready = %v", err)
	}
	sp := s.Begin(context.Background(), nil)
	for i := 1; i < 4; i++ {
		f.ch <- item{s: smp(i, 1001, 100, 1)}
	}
	f.ch <- item{s: smp(4, 1101, 100, 1)}
	s.End(context.Background(), sp, at(1101)) // all five are in
	if err := s.Ready(context.Background()); err != nil {
		t.Errorf("Ready after the stream was found live = %v", err)
	}
}

// A window that the placer can give no room (it came in the same read as
// the window before, which was placed by its arrival) has no length: it
// is not shown, nor counted as a sample, and the result says so.
func TestAWindowWithNoRoomIsNotASample(t *testing.T) {
	f := newFeed()
	s := Start(f, Config{Source: "powermetrics", Interval: 100 * time.Millisecond, Now: f.Now})
	defer s.Stop()
	f.ch <- item{s: smp(0, 1000, 100, 1)}
	if err := s.Ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.set(at(1000))
	// Windows are handed over after the Sampler lets go of its lock, so
	// End may return before the last one is: they are counted as they
	// come.
	windows := make(chan Window, 16)
	sp := s.Begin(context.Background(), func(w Window, _ Totals) { windows <- w })
	f.ch <- item{s: smp(1, 1100, 100, 10)}
	f.ch <- item{err: &powermetrics.DocumentError{Index: 2, Err: powermetrics.ErrMalformed}}
	f.ch <- item{s: smp(3, 1300, 100, 30)} // placed by its arrival
	f.ch <- item{s: smp(4, 1300, 100, 30)} // in the same read: no room
	f.ch <- item{s: smp(5, 1400, 100, 30)}
	r := s.End(context.Background(), sp, at(1400))
	var shown []Window
	for len(shown) < 3 {
		select {
		case w := <-windows:
			shown = append(shown, w)
		case <-time.After(time.Minute):
			t.Fatalf("%d windows shown a minute on", len(shown))
		}
	}
	select {
	case w := <-windows:
		shown = append(shown, w)
	default:
	}
	for _, w := range shown {
		if !w.End.After(w.Start) {
			t.Errorf("document %d shown with a window of %v", w.Index, w.End.Sub(w.Start))
		}
	}
	if len(shown) != 3 || r.Samples != 3 {
		t.Errorf("%d windows shown, %d samples; want 3 of each, documents 1, 3 and 5", len(shown), r.Samples)
	}
	// 10 W for 100 ms, the lost window bridged from 10 W to 30 W, then
	// 30 W for 200 ms.
	if want := 1 + 2 + 6.0; !near(r.Energy.Total, want, 1e-9) {
		t.Errorf("energy %v J, want %v J", r.Energy.Total, want)
	}
	if all := strings.Join(r.Warnings, "\n"); !strings.Contains(all, "document 4: ") || !strings.Contains(all, "no room") {
		t.Errorf("warnings %q", r.Warnings)
	}
}
