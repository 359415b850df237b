package wall_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/fakeplug"
	"github.com/exopower/exopower/internal/wall"
)

// The running total is the counter's own difference, exact to one
// count over an hour, and never goes back from one poll to the next.
func TestTheTotalIsTheCountersDifferenceAndOnlyGrows(t *testing.T) {
	m := newMetered(t, fakeplug.Config{Kind: fakeplug.ShellyGen2, Profile: wave(newClock().Now())}, wall.Credentials{})
	first := m.poll(1, time.Second)[0]
	prev := 0.0
	for range 3600 {
		m.poll(1, time.Second)
		tot := m.meter.Total()
		if tot.Joules < prev {
			t.Fatalf("the total went back from %.3f J to %.3f J", prev, tot.Joules)
		}
		prev = tot.Joules
	}
	tot := m.meter.Total()
	truth := m.fake.Energy(first, m.clk.Now())
	if math.Abs(tot.Joules-truth) > 3.6 || tot.Covered != time.Hour || tot.FromCounter != time.Hour || tot.Resets != 0 {
		t.Errorf("total = %+v, want %.3f J within one count (3.6 J), an hour covered by the counter", tot, truth)
	}
}

// Across a reset, the energy comes from the power readings, never the
// jump back; and time without a good reading counts nothing.
func TestTheTotalBridgesAResetAndCountsNoGap(t *testing.T) {
	clk0 := newClock().Now()
	reset := clk0.Add(time.Hour + 15*time.Second + 500*time.Millisecond)
	m := newMetered(t, fakeplug.Config{Kind: fakeplug.ShellyGen1, Profile: fakeplug.Constant(50), Faults: fakeplug.Faults{ResetAt: reset}}, wall.Credentials{})
	at := m.poll(40, time.Second)
	tot := m.meter.Total()
	// 39 s at 50 W: the counter's runs each within a count (60 J) of
	// the truth, the second across the reset from the power, exact.
	if truth := m.fake.Energy(at[0], at[39]); math.Abs(tot.Joules-truth) > 2*60 || tot.Resets != 1 || tot.Covered != 39*time.Second || tot.FromCounter != 38*time.Second {
		t.Errorf("total = %+v, want %.0f J within two counts, one reset, 39 s covered, 38 of them by the counter", tot, truth)
	}
	// Ten seconds without a poll: no energy but the two readings held
	// for three quarters of a second each.
	before := m.meter.Total()
	m.clk.Add(10 * time.Second)
	m.poll(1, time.Second)
	after := m.meter.Total()
	if got := after.Covered - before.Covered; got != 11*time.Second {
		// The counter holds the gap: its rise is exact over it.
		t.Errorf("a gap of 11 s between polls covered %v; the counter's rise holds all of it", got)
	}
}

// Span answers while the polling goes on, with the span's end held by a
// reading after it.
func TestASessionsSpanWaitsForAReadingAfterItsEnd(t *testing.T) {
	f := fakeplug.New(fakeplug.Config{Kind: fakeplug.ShellyGen2, Profile: fakeplug.Constant(40)})
	u := start(t, f)
	target, err := wall.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	s, err := wall.Start(context.Background(), target, wall.Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	from := time.Now()
	s.Mark()
	for i := range 3 {
		to := time.Now()
		sp := s.Span(context.Background(), from, to)
		if sp.Coverage != 1 || sp.Method != wall.MethodPower {
			t.Fatalf("span %d = %+v, want all of it covered by the power readings", i, sp)
		}
		if want := 40 * to.Sub(from).Seconds(); math.Abs(sp.Joules-want) > 1e-6*want {
			t.Errorf("span %d = %.6f J, want %.6f J (40 W over %v)", i, sp.Joules, want, to.Sub(from))
		}
		if r, at, ok := s.Latest(); !ok || !at.After(to) || r.Power != 40 {
			t.Errorf("latest reading %+v at %v (ok %v), want 40 W after the span's end %v", r, at, ok, to)
		}
	}
}

// biased is a plug whose power readings are 25 % low against its
// counter, which counts in watt-hours: a cheap plug's.
type biased struct {
	clk  *clock
	from time.Time
}

func (b *biased) Info() wall.Info {
	return wall.Info{Kind: wall.KindTasmota, CounterResolution: 3600, HasCounter: true, HasPower: true}
}

func (b *biased) Read(context.Context) (wall.Reading, error) {
	j := 40 * b.clk.Now().Sub(b.from).Seconds()
	return wall.Reading{Power: 30, HasPower: true, Counter: math.Floor(j/3600) * 3600, HasCounter: true}, nil
}

func (b *biased) Close() error { return nil }

// A counter of whole watt-hours moves once in 90 s at 40 W: the power
// readings place the energy between its counts, and the counter holds
// the total within a count of its own, however far the readings are off.
func TestTheTotalFollowsThePowerBetweenCountsAndTheCounterOverAnHour(t *testing.T) {
	clk := newClock()
	m := wall.NewMeter(&biased{clk: clk, from: clk.Now()}, time.Second, clk.Now)
	poll := func(n int) {
		for range n {
			clk.Add(time.Second)
			m.Poll(context.Background())
		}
	}
	m.Poll(context.Background())
	poll(10)
	if got := m.Total().Joules; got != 300 {
		t.Errorf("after 10 s before the counter's first count: %.3f J, want 300 J from the power readings", got)
	}
	prev := 0.0
	for range 3600 {
		poll(1)
		got := m.Total().Joules
		if got < prev {
			t.Fatalf("the total went back from %.3f J to %.3f J", prev, got)
		}
		prev = got
	}
	if truth := 40 * 3610.0; math.Abs(prev-truth) > 2*3600 {
		t.Errorf("after an hour: %.0f J, the truth %.0f J: more than two counts off", prev, truth)
	}
	if counter := math.Floor(40*3610.0/3600) * 3600; math.Abs(prev-counter) > 3600 {
		t.Errorf("after an hour: %.0f J, more than a count from the counter's %.0f J", prev, counter)
	}
}

// steadyPlug is a plug of power readings alone, at a steady 40 W.
type steadyPlug struct{}

func (steadyPlug) Info() wall.Info {
	return wall.Info{Kind: wall.KindHomeAssistant, HasPower: true}
}
func (steadyPlug) Read(context.Context) (wall.Reading, error) {
	return wall.Reading{Power: 40, HasPower: true}, nil
}
func (steadyPlug) Close() error { return nil }

// A plug asked several times within one of its refreshes (a bench reads
// it at each short run's start and end) rightly gives the same answer:
// that is no stall, and the span is covered.
func TestReadingsAlikeWithinASecondAreNoStall(t *testing.T) {
	clk := newClock()
	m := wall.NewMeter(steadyPlug{}, time.Second, clk.Now)
	from := clk.Now()
	for range 8 {
		m.Poll(context.Background())
		clk.Add(100 * time.Millisecond)
	}
	if s := m.Energy(from, from.Add(700*time.Millisecond)); s.Coverage != 1 || len(s.Warnings) != 0 || math.Abs(s.Joules-28) > 1e-9 {
		t.Errorf("span = %+v, want 28 J, covered, without a stall", s)
	}
}
