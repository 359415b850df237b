package sampler

import (
	"fmt"
	"time"
)

// PlaybackError says that a stream came far faster than its windows: a
// recording played into a pipe, not a live stream.
type PlaybackError struct {
	// Documents is how many came (from the first) within Within.
	Documents int
	Within    time.Duration
	// Apart is the time between the ends of the first window and the
	// last, by the windows' own lengths.
	Apart time.Duration
}

func (e *PlaybackError) Error() string {
	return fmt.Sprintf("documents 0 to %d came within %v, though their windows end %v apart: a recording played at once, not a live stream",
		e.Documents-1, e.Within.Round(100*time.Microsecond), e.Apart.Round(time.Millisecond))
}

// paceDocuments is how many documents judge a stream's pace: enough that
// a live stream's two documents read at once do not look like a burst.
const paceDocuments = 4

// pace judges a stream from a pipe by its first documents. A live stream
// comes at the pace of its windows: its document k arrives about the sum
// of windows 1..k after document 0. A recording played into the pipe
// comes as fast as it can be read. The first paceDocuments decide: they
// are a recording when they came within a tenth of the time their windows
// span. That time is not known before they come, so the first window
// stands in for each of theirs: a stream whose last judging document has
// not come within a tenth of that is live (see deadline).
//
// A live stream can come at once too, when exopower was slower to start
// reading than its producer to write (the two of a pipeline start
// together): its first documents wait in the pipe. They cannot cover more
// time than the producer has run, about as long as exopower; so where
// exopower's own start is known (began), documents that cover no more
// than twice the time since are that backlog, and the stream is live. A
// recording covers seconds and more, and comes within milliseconds of
// exopower's start.
type pace struct {
	on      bool
	began   time.Time // when exopower started; zero if not known
	settled bool      // judged live, or not to be judged any more
	n       int
	first   time.Time     // the first document's arrival
	window  time.Duration // the first document's window
	apart   time.Duration // the windows after the first, added up
}

// note takes the next document and returns a *PlaybackError when the
// documents so far are a recording's.
func (p *pace) note(arrival time.Time, window time.Duration) error {
	if !p.on || p.settled {
		return nil
	}
	p.n++
	if p.n == 1 {
		p.first, p.window = arrival, window
		return nil
	}
	p.apart += window
	if !arrival.Before(p.deadline()) {
		p.settled = true
		return nil
	}
	if p.n < paceDocuments {
		return nil
	}
	p.settled = true
	if within := arrival.Sub(p.first); within < p.apart/10 {
		if !p.began.IsZero() && p.window+p.apart <= 2*arrival.Sub(p.began) {
			return nil // a live stream's backlog
		}
		return &PlaybackError{Documents: p.n, Within: within, Apart: p.apart}
	}
	return nil
}

// deadline is the arrival after which no document can make the stream a
// recording: by then a recording's first documents would all be there.
func (p *pace) deadline() time.Time {
	return p.first.Add(time.Duration(paceDocuments-1) * p.window / 10)
}
