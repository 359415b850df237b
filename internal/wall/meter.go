package wall

import (
	"context"
	"sync"
	"time"
)

// DefaultInterval is how often a Meter polls its plug: plugs refresh
// their power reading about once a second.
const DefaultInterval = time.Second

// MinInterval is the shortest interval a Meter polls at: a plug's own
// readings change no faster, and a plug polled faster slows down.
const MinInterval = 100 * time.Millisecond

// MaxInterval is the longest: a plug read less often than hourly
// measures nothing a span needs, and twice it must not overflow.
const MaxInterval = time.Hour

// keep is how long a Meter keeps its polls, and maxPolls how many at
// most: a day at 1 s, a few hours at the shortest interval.
const (
	keep     = 24 * time.Hour
	maxPolls = 1 << 17
)

// Meter polls a plug and places each reading on the timeline, at the
// midpoint of its request's round trip, so that the energy over any span
// can be read (Energy).
type Meter struct {
	plug     Plug
	interval time.Duration
	now      func() time.Time
	mu       sync.Mutex
	polls    []poll
	stats    Stats
	// soon asks Run for a poll now (PollSoon), out of turn.
	soon chan struct{}
	// polled is closed at each poll, and made anew: After waits on it.
	polled chan struct{}
	// total is the running total (Total).
	total running
}

// poll is one request of the plug: its reading when ok.
type poll struct {
	at time.Time
	r  Reading
	ok bool
}

// Stats are a Meter's polls so far, for doctor.
type Stats struct {
	// Polls is how many reads were made, Failures how many failed.
	Polls, Failures int
	// LastError is the newest failure's message ("" when none), safe
	// to print.
	LastError string
	// LastOK is when the newest good reading was taken.
	LastOK time.Time
}

// NewMeter is a meter of p that polls every interval (DefaultInterval
// when 0, MinInterval at least) and reads time from now (time.Now when
// nil), the clock of the timeline its spans are asked on.
func NewMeter(p Plug, interval time.Duration, now func() time.Time) *Meter {
	if interval <= 0 {
		interval = DefaultInterval
	}
	if now == nil {
		now = time.Now
	}
	return &Meter{plug: p, interval: min(max(interval, MinInterval), MaxInterval), now: now, soon: make(chan struct{}, 1), polled: make(chan struct{})}
}

// PollSoon asks Run to poll the plug now, out of turn, without waiting
// for it: at a span's start, so that a reading, and the plug's counter,
// holds the start within a round trip rather than an interval.
func (m *Meter) PollSoon() {
	select {
	case m.soon <- struct{}{}:
	default: // one is asked for already
	}
}

// Run polls the plug every interval until ctx ends. A failed read is
// counted in Stats and leaves its time uncovered; the next poll is
// made on time all the same.
func (m *Meter) Run(ctx context.Context) {
	t := time.NewTicker(m.interval)
	defer t.Stop()
	for {
		m.Poll(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-m.soon:
			t.Reset(m.interval)
		}
	}
}

// Poll reads the plug once now and keeps the reading: Run's step, which
// a test can drive itself. A read cut short by ctx's end is not kept.
func (m *Meter) Poll(ctx context.Context) error {
	before := m.now()
	r, err := m.plug.Read(ctx)
	after := m.now()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	p := poll{at: before.Add(after.Sub(before) / 2), r: r, ok: err == nil}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.keep(p, err)
	cut := 0
	for cut < len(m.polls) && (len(m.polls)-cut > maxPolls || p.at.Sub(m.polls[cut].at) > keep) {
		cut++
	}
	m.polls = m.polls[cut:]
	return err
}

// keep counts the poll p, which failed with err where not nil, carries
// a good one into the running total, and keeps it: a live poll's and a
// recorded reading's bookkeeping alike. The caller holds m.mu.
func (m *Meter) keep(p poll, err error) {
	m.stats.Polls++
	if err != nil {
		m.stats.Failures++
		m.stats.LastError = err.Error()
	} else {
		m.stats.LastOK = p.at
		m.carry(p)
	}
	m.polls = append(m.polls, p)
	close(m.polled)
	m.polled = make(chan struct{})
}

// After waits until the meter holds a poll, good or failed, taken after
// t, or until ctx ends; it says which. Run must be polling: PollSoon asks
// for one now.
func (m *Meter) After(ctx context.Context, t time.Time) bool {
	for {
		m.mu.Lock()
		done := len(m.polls) > 0 && m.polls[len(m.polls)-1].at.After(t)
		ch := m.polled
		m.mu.Unlock()
		if done {
			return true
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
}

// Interval is how often the meter polls.
func (m *Meter) Interval() time.Duration { return m.interval }

// Latest is the newest good reading and when it was taken; ok is false
// before the first.
func (m *Meter) Latest() (Reading, time.Time, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := len(m.polls) - 1; i >= 0; i-- {
		if m.polls[i].ok {
			return m.polls[i].r, m.polls[i].at, true
		}
	}
	return Reading{}, time.Time{}, false
}

// Stats are the meter's polls so far.
func (m *Meter) Stats() Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stats
}
