package sampler

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"
)

// longWindowsOfAll is longWindows as it reads with every window kept:
// the median of all lengths, then each window in order.
func longWindowsOfAll(noun string, ws []indexed) []string {
	sorted := make([]time.Duration, len(ws))
	for i, w := range ws {
		sorted[i] = w.window
	}
	slices.Sort(sorted)
	typical := sorted[(len(sorted)-1)/2]
	var wl windowLengths
	of := "the recording's typical window (" + typical.Round(time.Millisecond).String() + ")"
	var msgs []string
	more := 0
	for _, w := range ws {
		wl.add(w.index, w.window)
		msg, ok := longWindow(noun, w.index, w.window, typical, of)
		switch {
		case !ok:
		case len(msgs) < maxNotes:
			msgs = append(msgs, msg)
		default:
			more++
		}
	}
	if more > 0 {
		msgs = append(msgs, "and "+strconv.Itoa(more)+" more windows as long")
	}
	return msgs
}

// The warnings of long windows read the same from the counted lengths as
// from every window kept, in the orders that test the pruning of the
// windows over 5 s: long ones rising (none can be let go), falling, and
// at random; few and many of them; and while the lengths are counted to
// the nanosecond.
func TestLongWindowsReadTheSameFromCountedLengths(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		name string
		make func(i int) time.Duration
	}{
		{"no window is long", func(int) time.Duration { return 100*time.Millisecond + time.Duration(rng.IntN(1e6)) }},
		{"a few long windows among jittered ones", func(i int) time.Duration {
			if i%997 == 5 {
				return 20*time.Second + time.Duration(i)
			}
			return 100*time.Millisecond + time.Duration(rng.IntN(1e6))
		}},
		{"long windows that rise", func(i int) time.Duration {
			if i%10 == 0 {
				return 6*time.Second + time.Duration(i)*time.Millisecond
			}
			return time.Second
		}},
		{"long windows that fall", func(i int) time.Duration {
			if i%10 == 0 {
				return time.Hour - time.Duration(i)*time.Millisecond
			}
			return time.Second
		}},
		{"every window over 5 s, the typical one 6 s", func(i int) time.Duration {
			if i%50 == 0 {
				return 61*time.Second + time.Duration(rng.IntN(1e9))
			}
			return 6*time.Second + time.Duration(rng.IntN(1e6))
		}},
	} {
		ws := make([]indexed, 20000)
		var wl windowLengths
		for i := range ws {
			ws[i] = indexed{i, c.make(i)}
			wl.add(i, ws[i].window)
		}
		if got, want := longWindows("reading", &wl), longWindowsOfAll("reading", ws); !slices.Equal(got, want) {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, want)
		}
		if len(wl.first) > 200 && c.name != "long windows that rise" {
			t.Errorf("%s: %d windows kept of the long ones", c.name, len(wl.first))
		}
	}
}

// Past maxLengths different lengths, the counts go to a coarser grain,
// and the median stays within one grain of the true one, below it.
func TestTheMedianOfManyLengthsIsWithinAGrain(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var l lengths
	all := make([]time.Duration, 3*maxLengths)
	for i := range all {
		all[i] = 100*time.Millisecond + time.Duration(rng.IntN(5e6))
		l.add(all[i])
	}
	slices.Sort(all)
	want, got := all[(len(all)-1)/2], l.nth((len(all)-1)/2)
	if l.grain == 1 || len(l.count) > maxLengths || got > want || want-got >= l.grain {
		t.Errorf("median %v, want %v within a grain of %v below (%d lengths counted)", got, want, l.grain, len(l.count))
	}
}
