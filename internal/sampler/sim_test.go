package sampler

import (
	"context"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/fakepm"
	"github.com/exopower/exopower/internal/power"
)

// simPM is a powermetrics in simulated time: it cuts windows from a known
// power profile, delivers each a little after it ends (sometimes two at
// once, as a pipe read does), and answers requests with a window that ends
// at once. Tests move its clock; nothing waits on the wall clock.
type simPM struct {
	t        *testing.T
	profile  fakepm.Profile
	interval time.Duration
	rng      *rand.Rand
	canReq   bool

	mu      sync.Mutex
	now     time.Time // the simulated clock
	end     time.Time // end of the last window cut
	held    *power.Sample
	index   int
	out     chan item
	stopped chan struct{}
	once    sync.Once
	lengths []time.Duration
}

type item struct {
	s   power.Sample
	err error
}

func newSimPM(t *testing.T, profile string, interval time.Duration, canRequest bool) *simPM {
	p, err := fakepm.ParseProfile(profile)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)
	return &simPM{
		t: t, profile: p, interval: interval, canReq: canRequest,
		rng: rand.New(rand.NewPCG(42, 1)),
		now: start, end: start,
		out: make(chan item, 1<<16), stopped: make(chan struct{}),
	}
}

func (p *simPM) Now() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.now
}

// length is the next window's length: uneven, a little over the interval,
// and shorter while power is high.
func (p *simPM) length() time.Duration {
	k := 1.08 * (0.8 + 0.4*p.rng.Float64())
	if p.profile.At(p.end).Total() > 20 {
		k *= 0.6
	}
	return time.Duration(float64(p.interval) * k)
}

func (p *simPM) latency() time.Duration {
	return time.Duration(100_000 + p.rng.Int64N(1_900_000)) // 0.1 to 2 ms
}

// cut makes the window [p.end, to] and delivers it at arrival; one window
// in five is held back and delivered with the next, as one read.
func (p *simPM) cut(to time.Time, arrival time.Time, hold bool) {
	e := p.profile.Energy(p.end, to)
	secs := to.Sub(p.end).Seconds()
	round := func(x float64) float64 { // %g, as powermetrics writes reals
		v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 6, 64), 64)
		return v
	}
	s := power.Sample{
		Index: p.index, Arrival: arrival, Window: to.Sub(p.end),
		Power: power.Values{CPU: round(e[0] / secs), GPU: round(e[1] / secs), ANE: round(e[2] / secs), Total: round(e.Total() / secs)},
		Has:   power.Reported{CPU: true, GPU: true, ANE: true}, HWModel: "Mac14,14", OSBuild: "24F74",
	}
	p.lengths = append(p.lengths, s.Window)
	p.index++
	p.end = to
	if p.held != nil {
		h := *p.held
		h.Arrival = arrival
		p.out <- item{s: h}
		p.held = nil
	}
	if hold {
		p.held = &s
		return
	}
	p.out <- item{s: s}
}

// advance moves the clock to t, cutting every window that ends by then.
func (p *simPM) advance(t time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		l := p.length()
		to := p.end.Add(l)
		arrival := to.Add(p.latency())
		if arrival.After(t) {
			break
		}
		p.cut(to, arrival, p.rng.IntN(5) == 0)
	}
	p.now = t
}

func (p *simPM) Next() (power.Sample, error) {
	select {
	case it := <-p.out:
		return it.s, it.err
	case <-p.stopped:
		return power.Sample{}, io.EOF
	}
}

func (p *simPM) CanRequestSample() bool { return p.canReq }

// RequestSample cuts a window that ends at once and arrives after the
// pipe's delay; the clock moves to its arrival.
func (p *simPM) RequestSample() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	to := p.now.Add(50 * time.Microsecond)
	arrival := to.Add(p.latency())
	p.cut(to, arrival, false)
	p.now = arrival
	return nil
}

func (p *simPM) Stop() error {
	p.once.Do(func() { close(p.stopped) })
	return nil
}

// placed waits until the sampler has placed n windows.
func placed(t *testing.T, s *Sampler, n int) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	ok := s.wait(context.Background(), time.Time{}, func() bool { return s.book.ledger.n >= n || s.book.ended })
	if !ok || s.book.ledger.n < n {
		t.Fatalf("sampler placed %d windows, want %d", s.book.ledger.n, n)
	}
}

func (p *simPM) cutCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := p.index
	if p.held != nil {
		n-- // cut, but not delivered yet
	}
	return n
}

// measure runs a span from t0 to T (offsets from the simulated start) and
// returns the result and the true energy of the span it measured.
func measure(t *testing.T, p *simPM, s *Sampler, from, to time.Duration) (Result, fakepm.Watts) {
	t.Helper()
	ctx := context.Background()
	start := p.Now()
	p.advance(start.Add(from - 300*time.Millisecond))
	if err := s.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	p.advance(start.Add(from))
	placed(t, s, p.cutCount())
	sp := s.Begin(ctx, nil)
	end := start.Add(to)
	if p.canReq {
		p.advance(end)
	} else {
		// Without requests the window that covers the end comes on its
		// own, up to an interval later.
		p.advance(end.Add(3 * p.interval))
	}
	placed(t, s, p.cutCount())
	r := s.End(ctx, sp, end)
	return r, p.profile.Energy(sp.Start, end)
}

func relErr(got, want float64) float64 { return math.Abs(got-want) / want }

func TestEnergyMatchesGroundTruthWithRequests(t *testing.T) {
	// A square wave of 5.5 W and 33 W, windows of about 100 ms that
	// shorten to about 60 ms at high power, a span that starts and ends
	// inside windows.
	p := newSimPM(t, fakepm.DefaultProfile, 100*time.Millisecond, true)
	s := Start(p, Config{Source: "powermetrics", Interval: p.interval, Now: p.Now})
	defer s.Stop()
	r, truth := measure(t, p, s, 1037*time.Millisecond, 9173*time.Millisecond)
	t.Logf("energy %.5f J, truth %.5f J, rel err %.2e, samples %d", r.Energy.Total, truth.Total(), relErr(r.Energy.Total, truth.Total()), r.Samples)
	for i, c := range []struct {
		name string
		got  float64
	}{{"CPU", r.Energy.CPU}, {"GPU", r.Energy.GPU}, {"ANE", r.Energy.ANE}} {
		if e := relErr(c.got, truth[i]); e > 0.001 {
			t.Errorf("%s energy %.4f J, true %.4f J: off by %.3f%%, want within 0.1%%", c.name, c.got, truth[i], 100*e)
		}
	}
	if e := relErr(r.Energy.Total, truth.Total()); e > 0.001 {
		t.Errorf("total energy %.4f J, true %.4f J: off by %.3f%%", r.Energy.Total, truth.Total(), 100*e)
	}
	wantAvg := truth.Total() / r.Duration.Seconds()
	if e := relErr(r.Average.Total, wantAvg); e > 0.001 {
		t.Errorf("average %.4f W, true time-weighted average %.4f W", r.Average.Total, wantAvg)
	}
	if r.Coverage != 1 || len(r.Warnings) != 0 {
		t.Errorf("coverage %v, warnings %q; want 1 and none", r.Coverage, r.Warnings)
	}
	if r.Peak.Total < 30 || r.Peak.Total > 33.01 {
		t.Errorf("peak %v W, want the high step's 33 W (within a window's average)", r.Peak.Total)
	}
	if r.Samples < 70 {
		t.Errorf("samples %d, want the ~100 windows of an 8 s span", r.Samples)
	}
}

func TestEnergyWithoutRequestsIsExactForSteadyPowerAtTheEdges(t *testing.T) {
	p := newSimPM(t, "0=12.5,3,0.25", 100*time.Millisecond, false)
	s := Start(p, Config{Source: "powermetrics", Interval: p.interval, Now: p.Now})
	defer s.Stop()
	r, truth := measure(t, p, s, 1037*time.Millisecond, 3173*time.Millisecond)
	if e := relErr(r.Energy.Total, truth.Total()); e > 1e-5 {
		t.Errorf("energy %.6f J, true %.6f J: off by %.4f%%", r.Energy.Total, truth.Total(), 100*e)
	}
	if r.Coverage != 1 {
		t.Errorf("coverage %v, want 1", r.Coverage)
	}
}

// Without requests the windows that straddle the edges are counted at
// their average over the whole window: the error is at most the straddled
// part of each edge window times the profile's range of power.
func TestEnergyWithoutRequestsStaysWithinTheEdgeWindows(t *testing.T) {
	p := newSimPM(t, fakepm.DefaultProfile, 100*time.Millisecond, false)
	s := Start(p, Config{Source: "powermetrics", Interval: p.interval, Now: p.Now})
	defer s.Stop()
	r, truth := measure(t, p, s, 1037*time.Millisecond, 9173*time.Millisecond)
	var longest time.Duration
	for _, l := range p.lengths {
		longest = max(longest, l)
	}
	bound := 2 * longest.Seconds() * (33 - 5.5)
	if diff := math.Abs(r.Energy.Total - truth.Total()); diff > bound {
		t.Errorf("energy %.4f J, true %.4f J: off by %.4f J, more than the edge windows allow (%.4f J)", r.Energy.Total, truth.Total(), diff, bound)
	}
	if relErr(r.Energy.Total, truth.Total()) > 0.02 {
		t.Errorf("energy %.4f J, true %.4f J: off by more than 2%%", r.Energy.Total, truth.Total())
	}
}
