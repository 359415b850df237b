package output

import (
	"os"

	"github.com/exopower/exopower/internal/keys"
	"sync/atomic"
	"time"
)

// FeedSize is how many windows a live sink may fall behind before one is
// not shown.
const FeedSize = 64

// Feed carries the windows of a live stream from the goroutine that reads
// the stream to the one that shows them, and never holds up the stream.
// This is the one rule for every live sink (watch's panel and lines,
// watch --node's, serve's /v1/windows): when the sink falls FeedSize
// windows behind, a window is not shown, and Dropped counts it. Nothing
// measured is lost: each line's energy is cumulative, so the next line
// shown holds what the dropped one added, and the spans read the ledger,
// not the lines. A sink that blocked the stream instead would delay the
// windows' arrivals, by which they are placed on the timeline.
type Feed[T any] struct {
	ch      chan T
	dropped atomic.Int64
}

// NewFeed returns an empty feed.
func NewFeed[T any]() *Feed[T] { return &Feed[T]{ch: make(chan T, FeedSize)} }

// Put hands x to the sink, or drops it when the sink is FeedSize behind.
// It never blocks.
func (f *Feed[T]) Put(x T) {
	select {
	case f.ch <- x:
	default:
		f.dropped.Add(1)
	}
}

// C is where the sink takes the items.
func (f *Feed[T]) C() <-chan T { return f.ch }

// Dropped is how many items were not shown.
func (f *Feed[T]) Dropped() int { return int(f.dropped.Load()) }

// DroppedWarning says, for a summary, how many windows a slow sink did not
// show; "" when it showed them all.
func (f *Feed[T]) DroppedWarning() string {
	n := f.Dropped()
	if n == 0 {
		return ""
	}
	return Count(n, "window") + " not shown: the output fell " + Count(FeedSize, "window") +
		" behind; the energy shown and the summary count them"
}

// Ending says why a live view ended.
type Ending int

const (
	// Shown: show said it was done (--count reached, or a failure).
	Shown Ending = iota
	// TimeUp: --duration passed.
	TimeUp
	// Signalled: Ctrl-C, SIGTERM or SIGHUP.
	Signalled
	// StreamEnded: the stream ended, and what it handed over was shown.
	StreamEnded
	// Quitted: a key said to (q on a live screen), as Ctrl-C would.
	Quitted
)

// Live says when a live view ends, and what else it takes meanwhile.
type Live struct {
	// Deadline ends the view (TimeUp); zero for none.
	Deadline time.Time
	// Signals end the view (Signalled); Resized asks Resize to redraw.
	Signals, Resized <-chan os.Signal
	Resize           func() error
	// Ended is closed when the stream has ended; nil for never.
	Ended <-chan struct{}
	// Keys are the keys pressed, each handed to Key, which says when
	// one ends the view (Quit); nil for none.
	Keys <-chan keys.Key
	Key  func(keys.Key) (quit bool, err error)
}

// Follow is the one wait loop of every live view: it shows the feed's
// items with show until show says it is done or fails, the deadline
// passes, a signal comes, or the stream ends (then what is still in the
// feed is shown first), and says which.
func Follow[T any](f Live, feed *Feed[T], show func(T) (done bool, err error)) (Ending, error) {
	var timeout <-chan time.Time
	if !f.Deadline.IsZero() {
		t := time.NewTimer(time.Until(f.Deadline))
		defer t.Stop()
		timeout = t.C
	}
	for {
		select {
		case x := <-feed.ch:
			if done, err := show(x); done || err != nil {
				return Shown, err
			}
		case <-f.Ended:
			for {
				select {
				case x := <-feed.ch:
					if done, err := show(x); done || err != nil {
						return Shown, err
					}
				default:
					return StreamEnded, nil
				}
			}
		case <-f.Resized:
			if err := f.Resize(); err != nil {
				return Shown, err
			}
		case k := <-f.Keys:
			if quit, err := f.Key(k); quit || err != nil {
				return Quitted, err
			}
		case <-timeout:
			return TimeUp, nil
		case <-f.Signals:
			return Signalled, nil
		}
	}
}
