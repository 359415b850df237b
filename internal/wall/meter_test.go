package wall_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/fakeplug"
	"github.com/exopower/exopower/internal/wall"
)

// metered is a fake plug of cfg on the test's clock, opened, with a
// meter over it that polls each second of the clock; polls are made by
// the test (poll).
type metered struct {
	t     *testing.T
	clk   *clock
	fake  *fakeplug.Fake
	meter *wall.Meter
	plug  wall.Plug
}

func newMetered(t *testing.T, cfg fakeplug.Config, creds wall.Credentials) *metered {
	t.Helper()
	clk := newClock()
	cfg.Now = clk.Now
	f := fakeplug.New(cfg)
	u := start(t, f)
	clk.Add(time.Hour) // a counter well away from 0
	p, err := open(t, u, creds)
	if err != nil {
		t.Fatal(err)
	}
	return &metered{t: t, clk: clk, fake: f, meter: wall.NewMeter(p, time.Second, clk.Now), plug: p}
}

// poll moves the clock on by step and polls, n times; it returns the
// time of each poll.
func (m *metered) poll(n int, step time.Duration) []time.Time {
	m.t.Helper()
	var at []time.Time
	for range n {
		m.clk.Add(step)
		if err := m.meter.Poll(context.Background()); err != nil {
			m.t.Fatal(err)
		}
		at = append(at, m.clk.Now())
	}
	return at
}

// within fails the test unless the span's joules are within its own
// uncertainty of the truth (and that within limit).
func within(t *testing.T, s wall.Span, truth, limit float64) {
	t.Helper()
	if err := math.Abs(s.Joules - truth); err > s.UncertaintyJoules+1e-6 || s.UncertaintyJoules > limit {
		t.Errorf("span = %.3f ± %.3f J (%s, coverage %.3f), truth %.3f J (off by %.3f J; uncertainty limit %.3f J); warnings %q",
			s.Joules, s.UncertaintyJoules, s.Method, s.Coverage, truth, err, limit, s.Warnings)
	}
}

// wave is a load that draws 20 W for 7 s, then 80 W for 3 s.
func wave(origin time.Time) fakeplug.Profile {
	return fakeplug.Square(origin, 20, 80, 7*time.Second, 3*time.Second)
}

func TestTheCounterGivesALongSpanWithinOneCount(t *testing.T) {
	tests := []struct {
		name  string
		cfg   fakeplug.Config
		creds wall.Credentials
		polls int
		count float64 // J
	}{
		{"a Shelly Plus plug over 30 s", fakeplug.Config{Kind: fakeplug.ShellyGen2}, wall.Credentials{}, 30, 3.6},
		{"a Shelly Gen1 plug over 60 s", fakeplug.Config{Kind: fakeplug.ShellyGen1}, wall.Credentials{}, 60, 60},
		{"a Tasmota at EnergyRes 5 over 30 s", fakeplug.Config{Kind: fakeplug.Tasmota, EnergyRes: 5}, wall.Credentials{}, 30, 36},
		{"Home Assistant in tenths of a watt-hour over 200 s", fakeplug.Config{Kind: fakeplug.HomeAssistant, Token: token, HAUnit: "Wh", HADecimals: 1, HAPower: true}, wall.Credentials{Token: token}, 200, 360},
		{"a Kasa plug over 20 min", fakeplug.Config{Kind: fakeplug.Kasa}, wall.Credentials{}, 1200, 3600},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk0 := newClock().Now()
			tt.cfg.Profile = wave(clk0)
			m := newMetered(t, tt.cfg, tt.creds)
			at := m.poll(tt.polls+2, time.Second)
			from, to := at[1], at[tt.polls+1]
			s := m.meter.Energy(from, to)
			if s.Method != wall.MethodCounter || s.Coverage != 1 || s.Polls != tt.polls+1 {
				t.Errorf("span = %+v, want the counter's, all covered, over %d polls", s, tt.polls+1)
			}
			// Between two polls the counter is exact to one count.
			within(t, s, m.fake.Energy(from, to), tt.count)
			// Edges between polls come from the power readings.
			from, to = from.Add(-300*time.Millisecond), to.Add(-400*time.Millisecond)
			s = m.meter.Energy(from, to)
			within(t, s, m.fake.Energy(from, to), tt.count+2*60)
		})
	}
}

func TestAShortSpanIsFromThePowerReadings(t *testing.T) {
	tests := []struct {
		name          string
		from, to      time.Duration // after the 10th poll
		limit         float64       // J
		wantCoverage1 bool
	}{
		{"a span shorter than a count, within one level", 200 * time.Millisecond, 700 * time.Millisecond, 0, true},
		{"a span of a few seconds, across the levels", -1500 * time.Millisecond, 1800 * time.Millisecond, 3.3 * 60, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A Shelly Gen1 counts 60 J: a few seconds are a few counts.
			m := newMetered(t, fakeplug.Config{Kind: fakeplug.ShellyGen1, Profile: wave(newClock().Now())}, wall.Credentials{})
			at := m.poll(20, time.Second)
			from, to := at[9].Add(tt.from), at[9].Add(tt.to)
			s := m.meter.Energy(from, to)
			if s.Method != wall.MethodPower || (s.Coverage == 1) != tt.wantCoverage1 {
				t.Errorf("span = %+v, want the power readings'", s)
			}
			within(t, s, m.fake.Energy(from, to), tt.limit)
		})
	}
}

func TestAResetNeitherAddsNorLosesTheJump(t *testing.T) {
	clk0 := newClock().Now()
	// The counter goes back to 0 (a reboot) half a second after the
	// 15th poll.
	reset := clk0.Add(time.Hour + 15*time.Second + 500*time.Millisecond)
	m := newMetered(t, fakeplug.Config{Kind: fakeplug.ShellyGen1, Profile: fakeplug.Constant(50), Faults: fakeplug.Faults{ResetAt: reset}}, wall.Credentials{})
	at := m.poll(40, time.Second)
	s := m.meter.Energy(at[0], at[39])
	if s.Method != wall.MethodCounter || s.Resets != 1 || s.Coverage != 1 {
		t.Errorf("span = %+v, want the counter's with one reset", s)
	}
	if !strings.Contains(strings.Join(s.Warnings, "\n"), "went back") {
		t.Errorf("warnings %q do not name the reset", s.Warnings)
	}
	// Two runs of the counter: a count each; the second between polls
	// from the power readings, exact at a constant power.
	within(t, s, m.fake.Energy(at[0], at[39]), 2*60)
}

func TestAStalledPlugIsNamedAndItsTimeNotCounted(t *testing.T) {
	clk0 := newClock().Now()
	stallFrom := clk0.Add(time.Hour + 10*time.Second + 500*time.Millisecond)
	faults := fakeplug.Faults{StallFrom: stallFrom, StallUntil: stallFrom.Add(10 * time.Second)}
	m := newMetered(t, fakeplug.Config{Kind: fakeplug.ShellyGen2, Profile: fakeplug.Constant(40), Faults: faults}, wall.Credentials{})
	at := m.poll(30, time.Second)
	s := m.meter.Energy(at[0], at[29])
	if !strings.Contains(strings.Join(s.Warnings, "\n"), "stayed the same") {
		t.Errorf("warnings %q do not name the stall", s.Warnings)
	}
	// Polls 11 to 20 (at 11 s to 20 s) are stale copies of the reading
	// at 10 s; the first good one after is at 21 s. Each side holds
	// three quarters of a second into the gap: 9.5 s are not covered.
	wantCovered := 29 - 9.5
	if math.Abs(s.Coverage*29-wantCovered) > 1e-9 {
		t.Errorf("covered %.3f s of 29 s, want %.3f s", s.Coverage*29, wantCovered)
	}
	within(t, s, 40*wantCovered, 2*3.6)
}

// stub is a plug in memory: each read asks read, at the meter's clock.
type stub struct {
	info wall.Info
	read func() (wall.Reading, error)
}

func (s *stub) Info() wall.Info                            { return s.info }
func (s *stub) Read(context.Context) (wall.Reading, error) { return s.read() }
func (s *stub) Close() error                               { return nil }
func stubInfo() wall.Info {
	return wall.Info{Kind: "stub", CounterResolution: 1, HasCounter: true, HasPower: true}
}
func steady(w float64, clk *clock, t0 time.Time) wall.Reading {
	return wall.Reading{Power: w, HasPower: true, Counter: math.Floor(w * clk.Now().Sub(t0).Seconds()), HasCounter: true}
}

func TestAPlugThatStopsAnswering(t *testing.T) {
	clk := newClock()
	t0 := clk.Now()
	down := func(now time.Time) bool {
		s := now.Sub(t0)
		return s > 10*time.Second && s <= 15*time.Second || s > 30*time.Second
	}
	p := &stub{info: stubInfo(), read: func() (wall.Reading, error) {
		if down(clk.Now()) {
			return wall.Reading{}, errors.New("plug: connection refused")
		}
		return steady(100, clk, t0), nil
	}}
	m := wall.NewMeter(p, time.Second, clk.Now)
	for range 40 {
		clk.Add(time.Second)
		m.Poll(context.Background())
	}
	tests := []struct {
		name         string
		from, to     time.Duration
		wantCoverage float64
		wantWarning  string
	}{
		{"its counter spans a silence it comes back from", 5 * time.Second, 25 * time.Second, 1, "did not answer 5 of 21 polls"},
		{"a silence to the span's end is not covered", 20 * time.Second, 40 * time.Second, 10.75 / 20, "no reading near the span's end"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := m.Energy(t0.Add(tt.from), t0.Add(tt.to))
			if math.Abs(s.Coverage-tt.wantCoverage) > 1e-9 || !strings.Contains(strings.Join(s.Warnings, "\n"), tt.wantWarning) {
				t.Errorf("span = %+v, want coverage %.4f and a warning saying %q", s, tt.wantCoverage, tt.wantWarning)
			}
			within(t, s, 100*s.Coverage*(tt.to-tt.from).Seconds(), 3)
		})
	}
	if st := m.Stats(); st.Polls != 40 || st.Failures != 15 || !strings.Contains(st.LastError, "connection refused") {
		t.Errorf("Stats = %+v, want 40 polls, 15 failed, the last error", st)
	}
}

func TestLatestAndTheDayKept(t *testing.T) {
	clk := newClock()
	t0 := clk.Now()
	p := &stub{info: stubInfo(), read: func() (wall.Reading, error) { return steady(10, clk, t0), nil }}
	m := wall.NewMeter(p, 0, clk.Now)
	if _, _, ok := m.Latest(); ok {
		t.Error("Latest before any poll says it has one")
	}
	m.Poll(context.Background())
	clk.Add(25 * time.Hour)
	m.Poll(context.Background())
	if r, at, ok := m.Latest(); !ok || !at.Equal(clk.Now()) || r.Power != 10 {
		t.Errorf("Latest = %+v at %v (%t), want the newest", r, at, ok)
	}
	if s := m.Energy(t0.Add(-time.Second), t0.Add(time.Second)); s.Polls != 0 || s.Coverage != 0 {
		t.Errorf("a span of more than a day ago = %+v, want nothing kept", s)
	}
}

func TestAPlugWithoutPowerReadingsGivesItsCounterAlone(t *testing.T) {
	m := newMetered(t, fakeplug.Config{Kind: fakeplug.HomeAssistant, Token: token, HAUnit: "Wh", HADecimals: 1, Profile: fakeplug.Constant(100)}, wall.Credentials{Token: token})
	at := m.poll(30, time.Second)
	from, to := at[4].Add(-500*time.Millisecond), at[24].Add(500*time.Millisecond)
	s := m.meter.Energy(from, to)
	if s.Method != wall.MethodCounter || math.Abs(s.Coverage-20.0/21) > 1e-9 {
		t.Errorf("span = %+v, want the counter's, its edges not covered", s)
	}
	within(t, s, 100*20, 360)
}

func TestRunPollsUntilItsContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	p := &stub{info: stubInfo(), read: func() (wall.Reading, error) {
		n++
		if n == 3 {
			cancel()
		}
		return wall.Reading{Power: 1, HasPower: true}, nil
	}}
	m := wall.NewMeter(p, wall.MinInterval, nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		m.Run(ctx)
	}()
	<-done
	if st := m.Stats(); st.Polls != 2 {
		t.Errorf("Stats = %+v, want the two polls made before the end (the third was cut short)", st)
	}
}
