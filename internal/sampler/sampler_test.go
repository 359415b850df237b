package sampler

import (
	"context"
	"errors"
	"io"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/power"
	"github.com/exopower/exopower/internal/powermetrics"
)

var base = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func ms(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }

func at(n float64) time.Time { return base.Add(ms(n)) }

func smp(i int, arrivalMS, windowMS, watts float64) power.Sample {
	return power.Sample{
		Index: i, Arrival: at(arrivalMS), Window: ms(windowMS),
		Power: power.Values{CPU: watts, Total: watts},
		Has:   power.Reported{CPU: true, GPU: true, ANE: true},
	}
}

func TestPlacerChainsWindows(t *testing.T) {
	tests := []struct {
		name    string
		samples []power.Sample
		lost    int // break the chain before this sample (0: never)
		want    [][2]float64
	}{
		{
			name:    "the first window ends at its arrival",
			samples: []power.Sample{smp(0, 1003, 100, 1)},
			want:    [][2]float64{{903, 1003}},
		},
		{
			name:    "a late arrival does not stretch the window",
			samples: []power.Sample{smp(0, 1000, 100, 1), smp(1, 1105, 100, 1)},
			want:    [][2]float64{{900, 1000}, {1000, 1100}},
		},
		{
			name:    "two documents read at once keep their own lengths",
			samples: []power.Sample{smp(0, 1000, 100, 1), smp(1, 1230, 110, 1), smp(2, 1230, 120, 1)},
			want:    [][2]float64{{900, 1000}, {1000, 1110}, {1110, 1230}},
		},
		{
			name:    "an early arrival pulls the end in: the end before it was late",
			samples: []power.Sample{smp(0, 1002, 100, 1), smp(1, 1101, 100, 1), smp(2, 1200.5, 100, 1)},
			want:    [][2]float64{{902, 1002}, {1002, 1101}, {1101, 1200.5}},
		},
		{
			name:    "after a lost document the next window is placed by its arrival",
			samples: []power.Sample{smp(0, 1000, 100, 1), smp(2, 1200, 100, 1)},
			lost:    1,
			want:    [][2]float64{{900, 1000}, {1100, 1200}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p placer
			for i, s := range tt.samples {
				if tt.lost > 0 && i == tt.lost {
					p.breakChain()
				}
				w := p.place(s)
				if got := [2]float64{w.Start.Sub(base).Seconds() * 1000, w.End.Sub(base).Seconds() * 1000}; math.Abs(got[0]-tt.want[i][0]) > 1e-6 || math.Abs(got[1]-tt.want[i][1]) > 1e-6 {
					t.Errorf("window %d at %v ms, want %v ms", i, got, tt.want[i])
				}
			}
		})
	}
}

// feed is a Source fed by the test.
type feed struct {
	ch       chan item
	stopped  chan struct{}
	once     sync.Once
	now      time.Time
	mu       sync.Mutex
	requests chan struct{}
	canReq   bool
	stopErr  error
}

func newFeed() *feed {
	return &feed{ch: make(chan item, 64), stopped: make(chan struct{}), now: base, requests: make(chan struct{}, 16)}
}

func (f *feed) Next() (power.Sample, error) {
	select {
	case it, ok := <-f.ch:
		if !ok {
			return power.Sample{}, io.EOF
		}
		return it.s, it.err
	case <-f.stopped:
		return power.Sample{}, io.EOF
	}
}
func (f *feed) CanRequestSample() bool { return f.canReq }
func (f *feed) RequestSample() error {
	f.requests <- struct{}{}
	return nil
}
func (f *feed) Stop() error { f.once.Do(func() { close(f.stopped) }); return f.stopErr }
func (f *feed) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}
func (f *feed) set(t time.Time) {
	f.mu.Lock()
	f.now = t
	f.mu.Unlock()
}

func TestReadyFailsClearly(t *testing.T) {
	t.Run("a stream with no power data fails at its first document", func(t *testing.T) {
		f := newFeed()
		f.ch <- item{err: &powermetrics.DocumentError{Index: 0, Err: powermetrics.ErrNoPowerData}}
		s := Start(f, Config{Source: "powermetrics", Interval: time.Second, Now: f.Now, ReadyTimeout: time.Hour})
		defer s.Stop()
		if err := s.Ready(context.Background()); !errors.Is(err, powermetrics.ErrNoPowerData) {
			t.Errorf("Ready = %v, want ErrNoPowerData", err)
		}
	})
	t.Run("a stream that ends before a sample fails with how it ended", func(t *testing.T) {
		f := newFeed()
		close(f.ch)
		s := Start(f, Config{Source: "powermetrics", Interval: time.Second, Now: f.Now, ReadyTimeout: time.Hour})
		defer s.Stop()
		var se *StreamEndedError
		if err := s.Ready(context.Background()); !errors.As(err, &se) {
			t.Errorf("Ready = %v, want a StreamEndedError", err)
		}
	})
	t.Run("a stream that stays silent fails after the bounded wait", func(t *testing.T) {
		f := newFeed()
		s := Start(f, Config{Source: "powermetrics", Interval: time.Second, ReadyTimeout: 20 * time.Millisecond})
		defer s.Stop()
		var ne *power.NoSampleError
		if err := s.Ready(context.Background()); !errors.As(err, &ne) || !strings.Contains(err.Error(), "no sample in 20ms") {
			t.Errorf("Ready = %v, want a NoSampleError after 20ms", err)
		}
	})
}

// begin feeds one sample, waits for Ready, and begins the span at t0 ms.
func begin(t *testing.T, f *feed, s *Sampler, t0 float64) *Span {
	t.Helper()
	f.ch <- item{s: smp(0, 1000, 100, 1)}
	if err := s.Ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.set(at(t0))
	return s.Begin(context.Background(), nil)
}

func TestEndWhenPowermetricsStopsMidSpan(t *testing.T) {
	f := newFeed()
	s := Start(f, Config{Source: "powermetrics", Interval: 100 * time.Millisecond, Now: f.Now})
	defer s.Stop()
	sp := begin(t, f, s, 1000)
	f.ch <- item{s: smp(1, 1100, 100, 10)}
	f.ch <- item{s: smp(2, 1200, 100, 10)}
	close(f.ch) // powermetrics died
	r := s.End(context.Background(), sp, at(2000))
	if !near(r.Energy.Total, 2, 1e-9) || !r.Ended {
		t.Errorf("energy %v J, ended %v; want the 2 J measured, and Ended", r.Energy.Total, r.Ended)
	}
	if !near(r.Coverage, 0.2, 1e-9) {
		t.Errorf("coverage %v, want 0.2", r.Coverage)
	}
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "powermetrics stopped 800ms before the end") {
		t.Errorf("warnings %q", r.Warnings)
	}
	if !near(r.Average.Total, 2, 1e-9) {
		t.Errorf("average %v W, want energy over the whole span: 2 W", r.Average.Total)
	}
}

func near(got, want, abs float64) bool { return math.Abs(got-want) <= abs }

func TestALostDocumentIsInterpolatedAndReported(t *testing.T) {
	f := newFeed()
	s := Start(f, Config{Source: "powermetrics", Interval: 100 * time.Millisecond, Now: f.Now})
	defer s.Stop()
	sp := begin(t, f, s, 1000)
	f.ch <- item{s: smp(1, 1100, 100, 10)}
	f.ch <- item{err: &powermetrics.DocumentError{Index: 2, Err: powermetrics.ErrMalformed}}
	f.ch <- item{s: smp(3, 1300, 100, 30)}
	f.ch <- item{s: smp(4, 1400, 100, 30)}
	r := s.End(context.Background(), sp, at(1400))
	// 10 W for 100 ms, a gap of 100 ms bridged from 10 W to 30 W, then
	// 30 W for 200 ms.
	if want := 1 + 2 + 6.0; !near(r.Energy.Total, want, 1e-9) {
		t.Errorf("energy %v J, want %v J", r.Energy.Total, want)
	}
	if !near(r.Coverage, 0.75, 1e-9) {
		t.Errorf("coverage %v, want 0.75: the lost window is estimated, not measured", r.Coverage)
	}
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "document 2: malformed plist") {
		t.Errorf("warnings %q", r.Warnings)
	}
}

func TestEndWaitsForTheWindowThatCoversIt(t *testing.T) {
	f := newFeed()
	s := Start(f, Config{Source: "powermetrics", Interval: 100 * time.Millisecond, Now: f.Now, Grace: time.Hour})
	defer s.Stop()
	sp := begin(t, f, s, 1000)
	f.ch <- item{s: smp(1, 1100, 100, 10)}
	done := make(chan Result)
	go func() { done <- s.End(context.Background(), sp, at(1150)) }()
	// End cannot answer before the window that covers 1150 ms arrives.
	f.ch <- item{s: smp(2, 1200, 100, 20)}
	r := <-done
	if want := 1 + 1.0; !near(r.Energy.Total, want, 1e-9) || r.Coverage != 1 || len(r.Warnings) != 0 {
		t.Errorf("energy %v J (want %v), coverage %v, warnings %q", r.Energy.Total, want, r.Coverage, r.Warnings)
	}
	if r.Peak.Total != 20 || r.Samples != 2 {
		t.Errorf("peak %v W, samples %d; want 20 W and 2", r.Peak.Total, r.Samples)
	}
}

func TestBeginAndEndAskForSamplesWhereTheyCan(t *testing.T) {
	f := newFeed()
	f.canReq = true
	s := Start(f, Config{Source: "powermetrics", Interval: 100 * time.Millisecond, Now: f.Now, Grace: time.Hour})
	defer s.Stop()
	f.ch <- item{s: smp(0, 1000, 100, 1)}
	if err := s.Ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.set(at(1040))
	began := make(chan *Span)
	go func() { began <- s.Begin(context.Background(), nil) }()
	<-f.requests
	// The clock reads 1041 ms before the answer comes: Begin reads it
	// once the answer is in, which may be before this goroutine goes on.
	f.set(at(1041))
	f.ch <- item{s: smp(1, 1041, 41, 5)} // the answer to the request
	sp := <-began
	if !sp.Start.Equal(at(1041)) {
		t.Errorf("span began at %v, want after the requested sample", sp.Start.Sub(base))
	}
	ended := make(chan Result)
	go func() { ended <- s.End(context.Background(), sp, at(1100)) }()
	<-f.requests
	f.ch <- item{s: smp(2, 1101, 60, 10)}
	r := <-ended
	if !near(r.Energy.Total, 0.59, 1e-9) {
		t.Errorf("energy %v J, want 10 W over 59 ms", r.Energy.Total)
	}
}

func TestOnWindowSeesRunningTotals(t *testing.T) {
	f := newFeed()
	s := Start(f, Config{Source: "powermetrics", Interval: 100 * time.Millisecond, Now: f.Now})
	defer s.Stop()
	f.ch <- item{s: smp(0, 1000, 100, 1)}
	if err := s.Ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.set(at(1000))
	// Windows are handed over after the Sampler lets go of its lock: End
	// may return before the last one is, so they are taken as they come.
	totals := make(chan Totals, 16)
	sp := s.Begin(context.Background(), func(w Window, tot Totals) { totals <- tot })
	f.ch <- item{s: smp(1, 1100, 100, 10)}
	f.ch <- item{s: smp(2, 1200, 100, 20)}
	s.End(context.Background(), sp, at(1200))
	seen := []Totals{<-totals, <-totals}
	if len(seen) != 2 || !near(seen[1].Energy.Total, 3, 1e-9) || seen[1].Elapsed != ms(200) || seen[1].Peak.Total != 20 {
		t.Errorf("totals %+v", seen)
	}
}

func TestASpanOlderThanTheKeptWindowsIsSaid(t *testing.T) {
	var l ledger
	for i := 0; i < 2*ringSize; i++ {
		l.add(Window{Start: at(float64(i * 10)), End: at(float64(i*10 + 10)), Power: power.Values{Total: 1}})
	}
	if _, ok := l.at(at(5)); ok {
		t.Error("the ledger answered for an instant older than the ring")
	}
	got, ok := l.at(at(float64(2*ringSize*10 - 5)))
	if !ok || !near(got.energy().Total, float64(2*ringSize*10-5)/1000, 1e-9) {
		t.Errorf("E at a recent instant: %v J, %v", got.energy().Total, ok)
	}
}

// A Mac asleep mid-run: one window far longer than the interval. Its
// average counts for its whole length like any other, and the result says
// the Mac may have slept.
func TestAWindowFarLongerThanTheIntervalCountsAndIsReported(t *testing.T) {
	f := newFeed()
	s := Start(f, Config{Source: "powermetrics", Interval: 100 * time.Millisecond, Now: f.Now})
	defer s.Stop()
	sp := begin(t, f, s, 1000)
	f.ch <- item{s: smp(1, 1100, 100, 10)}
	f.ch <- item{s: smp(2, 61100, 60000, 0.5)}
	f.ch <- item{s: smp(3, 61200, 100, 10)}
	r := s.End(context.Background(), sp, at(61200))
	if want := 1 + 30 + 1.0; !near(r.Energy.Total, want, 1e-9) || r.Coverage != 1 {
		t.Errorf("energy %v J (want %v J), coverage %v", r.Energy.Total, want, r.Coverage)
	}
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "document 2 covers 1m0s, 600 times the interval: the Mac may have slept") {
		t.Errorf("warnings %q", r.Warnings)
	}
}

// A document too large to find its end in ends the stream: what came
// before it counts, and the result says why the rest is missing.
func TestAHugeDocumentEndsTheStreamAndIsReported(t *testing.T) {
	f := newFeed()
	s := Start(f, Config{Source: "powermetrics", Interval: 100 * time.Millisecond, Now: f.Now})
	defer s.Stop()
	sp := begin(t, f, s, 1000)
	f.ch <- item{s: smp(1, 1100, 100, 10)}
	f.ch <- item{err: &powermetrics.DocumentError{Index: 2, Err: powermetrics.ErrTooLarge}}
	r := s.End(context.Background(), sp, at(1200))
	if !near(r.Energy.Total, 1, 1e-9) || !r.Ended || !near(r.Coverage, 0.5, 1e-9) {
		t.Errorf("energy %v J, ended %v, coverage %v", r.Energy.Total, r.Ended, r.Coverage)
	}
	if len(r.Warnings) != 2 || !strings.Contains(r.Warnings[0], "the stream broke off: document 2: larger than 16 MiB") {
		t.Errorf("warnings %q", r.Warnings)
	}
}

// When powermetrics's combined_power is not CPU + GPU + ANE, the total
// stays the sum of the components shown, and the result says in how many
// windows, and by how much at most, they disagreed.
func TestCombinedPowerThatDisagreesIsReported(t *testing.T) {
	f := newFeed()
	s := Start(f, Config{Source: "powermetrics", Interval: 100 * time.Millisecond, Now: f.Now})
	defer s.Stop()
	sp := begin(t, f, s, 1000)
	for i, combined := range []float64{0, 12, 10, 10.5} {
		w := smp(i+1, 1100+100*float64(i), 100, 10)
		w.CombinedPower, w.CombinedDisagrees = combined, combined != 10
		if combined == 0 {
			w.CombinedDisagrees = false // a document without combined_power
		}
		f.ch <- item{s: w}
	}
	r := s.End(context.Background(), sp, at(1400))
	if !near(r.Energy.Total, 4, 1e-9) {
		t.Errorf("energy %v J, want 4 J: the sum of the components", r.Energy.Total)
	}
	want := "powermetrics's combined_power disagreed with CPU + GPU + ANE in 2 of the windows (by up to 2 W); the total is the sum of the components"
	if len(r.Warnings) != 1 || r.Warnings[0] != want {
		t.Errorf("warnings %q, want %q", r.Warnings, want)
	}
}

// A window's Peak is the sample's power as a peak counts it: a batch's
// landing at its power over the time it accrued (serve's gauges show
// it), while the ledger integrates its power over the window.
func TestAWindowsPeakIsItsSamplesPeakPower(t *testing.T) {
	s := smp(0, 1000, 100, 300)
	s.Peak, s.PeakSet = power.Values{CPU: 10, Total: 10}, true
	var p placer
	if w := p.place(s); w.Power.CPU != 300 || w.Peak.CPU != 10 {
		t.Errorf("power %v W, peak %v W: want 300 and 10", w.Power.CPU, w.Peak.CPU)
	}
	if w := p.place(smp(1, 1100, 100, 7)); w.Peak != w.Power {
		t.Errorf("a window with no peak of its own: peak %+v, power %+v", w.Peak, w.Power)
	}
}
