package power

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

func TestSummedAddsTheComponentsIntoTheTotal(t *testing.T) {
	v := Values{CPU: 1.5, GPU: 2.25, ANE: 0.25, Total: 99}.Summed()
	if v.Total != 4 {
		t.Errorf("Total = %v, want 4", v.Total)
	}
}

// refused is a source's refusal, as a test makes it.
type refused struct{ ends bool }

func (r refused) Error() string      { return "refused" }
func (r refused) Reason() string     { return "malformed" }
func (r refused) Ends() bool         { return r.ends }
func (r refused) Unmeasurable() bool { return false }
func (r refused) Cut() bool          { return false }

func TestWhatEndsAStream(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		ends bool
	}{
		{"no error", nil, false},
		{"the end of the stream", io.EOF, true},
		{"a refused reading", refused{}, false},
		{"a refused reading, wrapped", fmt.Errorf("document 3: %w", refused{}), false},
		{"a refused reading that ends the stream", refused{ends: true}, true},
		{"a break", &BreakError{Source: "powermetrics", Err: errors.New("killed")}, false},
		{"any other error", errors.New("read: broken pipe"), true},
	} {
		if got := EndsStream(c.err); got != c.ends {
			t.Errorf("%s: EndsStream = %v, want %v", c.name, got, c.ends)
		}
	}
}

func TestMessagesNameTheSource(t *testing.T) {
	be := &BreakError{Source: "powermetrics", Err: errors.New("exit status 3")}
	if got, want := be.Error(), "powermetrics stopped (exit status 3) and was started again"; got != want {
		t.Errorf("BreakError = %q, want %q", got, want)
	}
	ne := &NoSampleError{Source: "powermetrics", Waited: 5020e6}
	if got, want := ne.Error(), "powermetrics produced no sample in 5.02s"; got != want {
		t.Errorf("NoSampleError = %q, want %q", got, want)
	}
}

// Windows whose CPU counter stood still are said only where nothing
// else explains them: a batch that landed, or a counter stuck. Each
// warning names the rail and how long it stood still.
func TestQuirkWarningsNameTheRailAndHowLongItStood(t *testing.T) {
	still := func(r Rail, q Quirk, stood time.Duration) *Sample {
		s := &Sample{Quirks: q}
		s.Rails[r] = RailNote{Quirks: q, Stood: stood}
		return s
	}
	var alone QuirkTally
	for i := range 9 {
		alone.Add(still(CPU, CounterStill, time.Duration(i+1)*100*time.Millisecond))
	}
	if w := alone.Warnings(); len(w) != 1 || !strings.Contains(w[0], "in 9 windows the CPU's energy counter did not move while the others did for 0.9 s") {
		t.Errorf("still alone: %q", w)
	}
	var batched QuirkTally
	for i := range 19 {
		batched.Add(still(CPU, CounterStill, time.Duration(i+1)*100*time.Millisecond))
	}
	batched.Add(still(CPU, CounterBatched, 3*time.Second))
	if w := batched.Warnings(); len(w) != 1 || !strings.Contains(w[0], "in 1 window the CPU's energy counter moved in a step after standing still for 3.0 s") {
		t.Errorf("still, then the batch: %q", w)
	}
	var stuck QuirkTally
	stuck.Add(still(DRAM, CounterFlat, 4200*time.Millisecond))
	s := still(CPU, CounterFlat, 3100*time.Millisecond)
	s.Rails[DRAM] = RailNote{Quirks: CounterFlat, Stood: 4300 * time.Millisecond}
	stuck.Add(s)
	if w := stuck.Warnings(); len(w) != 1 || !strings.Contains(w[0], "the CPU's (3.1 s) and the DRAM's (4.3 s) energy counters stood still while the others") {
		t.Errorf("two rails stuck: %q", w)
	}
	if Quirks[3] != CounterStill {
		t.Errorf("Quirks %v: the counts' order is Quirks's", Quirks)
	}
}
