package sampler

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// lengths counts windows by their length, in memory that does not grow
// with their number: to the nanosecond while fewer than maxLengths
// lengths differ, and past that in buckets of a grain that doubles as
// needed, each counted at its lower edge. A day of readings at 100 ms has
// as many lengths as windows, which jitter by microseconds; the median of
// such a count is then within one grain (about a microsecond) of the
// true one.
type lengths struct {
	n     int
	grain time.Duration
	count map[time.Duration]int
}

// maxLengths bounds the lengths counted apart, about 1 MB of map.
const maxLengths = 1 << 15

func (l *lengths) add(d time.Duration) {
	if l.count == nil {
		l.grain, l.count = 1, map[time.Duration]int{}
	}
	l.n++
	l.count[d-d%l.grain]++
	for len(l.count) > maxLengths {
		l.grain *= 2
		coarse := make(map[time.Duration]int, len(l.count)/2)
		for k, c := range l.count {
			coarse[k-k%l.grain] += c
		}
		l.count = coarse
	}
}

// nth is the length of rank i (from 0) in ascending order.
func (l *lengths) nth(i int) time.Duration {
	keys := slices.Sorted(maps.Keys(l.count))
	for _, k := range keys {
		if i -= l.count[k]; i < 0 {
			return k
		}
	}
	return 0
}

// over counts the windows longer than d.
func (l *lengths) over(d time.Duration) int {
	n := 0
	for k, c := range l.count {
		if k > d {
			n += c
		}
	}
	return n
}

// minLong is the shortest window that can be long, whatever the typical
// one (see longWindow).
const minLong = 5 * time.Second

// windowLengths is what the warnings of long windows need of a
// recording's windows: their lengths, to find the typical one (the
// median), and of the windows over minLong, their lengths and those that
// may be among the first maxNotes long ones, in order.
type windowLengths struct {
	all, overMin lengths
	// first are the windows over minLong that fewer than maxNotes
	// windows before them, kept here, are as long as: a window that many
	// as long come before cannot be among the first maxNotes long ones.
	first []indexed
}

func (wl *windowLengths) add(index int, window time.Duration) {
	wl.all.add(window)
	if window <= minLong {
		return
	}
	wl.overMin.add(window)
	longer := 0
	for _, w := range wl.first {
		if w.window >= window {
			longer++
		}
	}
	if longer < maxNotes {
		wl.first = append(wl.first, indexed{index, window})
	}
}

// indexed is a document's window and its index in the stream.
type indexed struct {
	index  int
	window time.Duration
}

// longWindows warns of the windows far longer than a recording's typical
// one. A recording has no interval: the median window stands in for it,
// which, unlike the mean, one long window does not raise.
func longWindows(noun string, wl *windowLengths) []string {
	if wl.all.n == 0 {
		return nil
	}
	typical := wl.all.nth((wl.all.n - 1) / 2)
	of := fmt.Sprintf("the recording's typical window (%v)", typical.Round(time.Millisecond))
	var msgs []string
	for _, w := range wl.first {
		if msg, ok := longWindow(noun, w.index, w.window, typical, of); ok && len(msgs) < maxNotes {
			msgs = append(msgs, msg)
		}
	}
	if typical <= 0 {
		return msgs
	}
	if more := wl.overMin.over(max(10*typical, minLong)) - len(msgs); more > 0 {
		msgs = append(msgs, fmt.Sprintf("and %d more windows as long", more))
	}
	return msgs
}
