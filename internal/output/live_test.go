package output

import (
	"errors"
	"os"
	"slices"
	"syscall"
	"testing"
	"time"
)

// A feed never holds up what puts into it: past FeedSize items behind,
// the newest is dropped and counted, and the summary's warning says so.
func TestAFeedDropsRatherThanWaits(t *testing.T) {
	f := NewFeed[int]()
	for i := range FeedSize + 5 {
		f.Put(i)
	}
	if f.Dropped() != 5 {
		t.Errorf("dropped %d, want 5", f.Dropped())
	}
	if got, want := f.DroppedWarning(), "5 windows not shown: the output fell 64 windows behind; the energy shown and the summary count them"; got != want {
		t.Errorf("warning %q, want %q", got, want)
	}
	if got := <-f.C(); got != 0 {
		t.Errorf("first item %d, want the oldest, 0", got)
	}
	if w := NewFeed[int]().DroppedWarning(); w != "" {
		t.Errorf("a feed that dropped nothing warns %q", w)
	}
}

// Follow shows the items in order and says why it ended: show was done,
// the deadline, a signal, or the stream's end after what was left.
func TestFollowSaysWhyItEnded(t *testing.T) {
	feedOf := func(xs ...int) *Feed[int] {
		f := NewFeed[int]()
		for _, x := range xs {
			f.Put(x)
		}
		return f
	}
	var shown []int
	show := func(stopAt int) func(int) (bool, error) {
		return func(x int) (bool, error) { shown = append(shown, x); return x == stopAt, nil }
	}
	ended := make(chan struct{})
	close(ended)
	sigs := make(chan os.Signal, 1)
	sigs <- syscall.SIGINT
	for _, c := range []struct {
		name  string
		live  Live
		feed  *Feed[int]
		stop  int
		want  Ending
		shown []int
	}{
		{"show is done", Live{}, feedOf(1, 2, 3), 2, Shown, []int{1, 2}},
		{"the stream ended: what is left is shown first", Live{Ended: ended}, feedOf(1, 2, 3), -1, StreamEnded, []int{1, 2, 3}},
		{"the deadline passed", Live{Deadline: time.Now()}, feedOf(), -1, TimeUp, nil},
		{"a signal", Live{Signals: sigs}, feedOf(), -1, Signalled, nil},
	} {
		shown = nil
		why, err := Follow(c.live, c.feed, show(c.stop))
		if why != c.want || err != nil || !slices.Equal(shown, c.shown) {
			t.Errorf("%s: %v, %v, shown %v; want %v, shown %v", c.name, why, err, shown, c.want, c.shown)
		}
	}
}

// A failure to show an item, or to redraw, ends it with that failure.
func TestFollowEndsOnAFailure(t *testing.T) {
	full := errors.New("no space left on device")
	f := NewFeed[int]()
	f.Put(1)
	if why, err := Follow(Live{}, f, func(int) (bool, error) { return false, full }); why != Shown || err != full {
		t.Errorf("show failed: %v, %v", why, err)
	}
	resized := make(chan os.Signal, 1)
	resized <- syscall.SIGWINCH
	redraws := 0
	resize := func() error { redraws++; return full }
	if why, err := Follow(Live{Resized: resized, Resize: resize}, NewFeed[int](), func(int) (bool, error) { return false, nil }); why != Shown || err != full || redraws != 1 {
		t.Errorf("redraw failed: %v, %v after %d redraws", why, err, redraws)
	}
}
