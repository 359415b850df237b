package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/exopower/exopower/internal/power"
	"github.com/exopower/exopower/internal/wire"
)

// Remote is a node reached through its exopower serve.
type Remote struct {
	c        *Client
	status   wire.Status
	rtt      time.Duration // the longest round trip of a plain request
	interval time.Duration
	// wait bounds a request that waits for one of the node's windows,
	// silence a stream that goes without one (Wait, and the interval
	// and StreamSlack): exopower's limits, never the node's claims.
	wait, silence time.Duration
	opened        wire.Opened
	offset        time.Duration
	// sent is when the request that opened the span went, began the
	// span's start by this Mac's clock, as near as a round trip tells.
	sent, began time.Time

	mu      sync.Mutex
	last    *wire.Reading // the newest good reading of the open span
	refused error         // the first reading of the open span refused

	stopPoll context.CancelFunc
	stopped  chan struct{}
}

// Connect asks the node for its status: a node that does not answer, or
// answers as no exopower serve does (an interval out of the range of
// --interval among others), is known before anything starts.
func Connect(ctx context.Context, c *Client) (*Remote, error) {
	ctx, cancel := context.WithTimeout(ctx, StatusWait)
	defer cancel()
	st, rtt, err := c.Status(ctx)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("GET /v1/status: no answer within %v", StatusWait)
		}
		return nil, err
	}
	interval := time.Duration(float64(st.IntervalSeconds) * float64(time.Second))
	return &Remote{c: c, status: st, rtt: rtt, interval: interval, wait: Wait(interval), silence: interval + StreamSlack}, nil
}

// Name is the node's own name for itself.
func (r *Remote) Name() string { return r.status.Node }

// URL is the node's address.
func (r *Remote) URL() string { return r.c.target.Name() }

// Begin opens the span, notes how far the node's clock is from this
// Mac's, and reads the span now and then as it goes, so that what was
// measured survives a node that stops answering. The node waits for a
// window before it answers: Begin waits for it no longer than Wait.
func (r *Remote) Begin(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, r.wait)
	defer cancel()
	sent := time.Now()
	o, _, err := r.c.Open(ctx)
	if err != nil {
		return errWait("POST /v1/spans", err, r.wait)
	}
	started, _ := time.Parse(time.RFC3339Nano, o.StartedAt) // checked by Open
	// The node stamped the start just before it answered, a one-way trip
	// (half a plain round trip) ago.
	r.began = time.Now().Add(-r.rtt / 2)
	r.offset = started.Sub(r.began)
	r.sent, r.opened = sent, o
	r.mu.Lock()
	r.last, r.refused = nil, nil
	r.mu.Unlock()
	poll, stop := context.WithCancel(context.Background())
	r.stopPoll, r.stopped = stop, make(chan struct{})
	go r.poll(poll)
	return nil
}

// pollEvery is how often an open span is read: often enough that a node
// lost mid-run leaves little unreported, seldom enough to cost nothing.
// A node of a longer interval is read once an interval, up to
// MaxWindowWait.
const pollEvery = time.Second

func (r *Remote) poll(ctx context.Context) {
	defer close(r.stopped)
	t := time.NewTicker(min(max(pollEvery, r.interval), MaxWindowWait))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		rctx, cancel := context.WithTimeout(ctx, StatusWait)
		rd, err := r.c.Read(rctx, r.opened.ID)
		cancel()
		if err == nil {
			err = r.checkSpan(rd)
		}
		r.mu.Lock()
		switch {
		case err == nil:
			r.last = &rd
		case r.refused == nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded):
			r.refused = err
		}
		r.mu.Unlock()
	}
}

// checkSpan checks that a reading of the span is no longer than the
// time since the span was opened, give or take EndSlack.
func (r *Remote) checkSpan(rd wire.Reading) error {
	if most := time.Since(r.sent) + EndSlack; float64(rd.DurationSeconds) > most.Seconds() {
		return notServe("the span's reading", fmt.Errorf("duration_seconds %v is longer than the span has lasted (%.3g s)", float64(rd.DurationSeconds), most.Seconds()))
	}
	return nil
}

// End closes the span: at most Wait, after which the node counts as
// lost, with what it measured by its last reading. The reading then in
// flight is given up first, so that the end's is the only wait.
func (r *Remote) End(ctx context.Context, at time.Time) wire.NodeSummary {
	r.stopPoll()
	<-r.stopped
	if ctx.Err() != nil {
		// The user wants out now (a second Ctrl-C): the span must still
		// be closed on the node, or it stays open there for a day, so
		// the request goes, with a second to arrive and no wait for the
		// window (the node closes the span when its client goes).
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.Background(), time.Second)
		defer cancel()
	}
	ctx, cancel := context.WithTimeout(ctx, r.wait)
	defer cancel()
	rd, _, err := r.c.End(ctx, r.opened.ID)
	if err == nil {
		err = r.checkSpan(rd)
	}
	lost := err != nil
	r.mu.Lock()
	last, refused := r.last, r.refused
	r.mu.Unlock()
	if lost {
		rd = r.lostReading(last, at)
		rd.Warnings = append(rd.Warnings, "lost: "+errWait("POST /v1/spans/"+r.opened.ID+"/end", err, r.wait).Error())
	} else if _, rtt, err := r.c.Status(ctx); err == nil {
		r.rtt = max(r.rtt, rtt)
	}
	if refused != nil {
		rd.Warnings = append(rd.Warnings, "a reading of its span was refused: "+refused.Error())
	}
	ended := ""
	if rd.EndedAt != nil {
		ended = *rd.EndedAt
	}
	return wire.NodeSummary{Summary: rd.Summary, Node: r.Name(), URL: r.URL(), EndedAt: ended,
		RoundTripSeconds: wire.Num(r.rtt.Seconds()), ClockOffsetSeconds: wire.Num(r.offset.Seconds()), Lost: lost}
}

// lostReading is what a lost node measured: its last good reading, or
// nothing, with its coverage that of the span it was to measure, which
// ends at at: the time its reading covered over the span's length by
// this Mac's clock.
func (r *Remote) lostReading(last *wire.Reading, at time.Time) wire.Reading {
	if last == nil {
		return wire.Reading{Summary: &wire.Summary{SchemaVersion: wire.SchemaVersion, Type: "span", StartedAt: r.opened.StartedAt,
			IntervalSeconds: wire.Num(r.interval.Seconds()), Scope: wire.Scope, Source: r.status.Source, Warnings: []string{}}}
	}
	sum := *last.Summary
	sum.Warnings = append([]string{}, sum.Warnings...)
	if span := at.Sub(r.began).Seconds(); span > 0 {
		covered := float64(sum.Coverage) * float64(sum.DurationSeconds)
		sum.Coverage = wire.Num(min(float64(sum.Coverage), covered/span))
	}
	return wire.Reading{Summary: &sum, ID: last.ID, Node: last.Node}
}

// errWait says what err, from the request what bounded by wait, was: a
// deadline passed is no answer within it.
func errWait(what string, err error, wait time.Duration) error {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s: no answer within %v (its interval, at most %v, and %v)", what, wait, MaxWindowWait, EndSlack)
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("%s: the wait for its answer was cut short", what)
	}
	return err
}

// The reconnection of a stream that broke: tries at growing intervals
// from retryFirst, up to retryTries in a row that bring no window, and
// up to maxBreaks breaks in all, after which the node's stream is given
// up. Variables, so that tests need not wait as long.
var (
	retryFirst = 250 * time.Millisecond
	retryTries = 5
	maxBreaks  = 20
)

// Stream hands f the node's windows as they come, until ctx ends or the
// node's stream is given up. A stream that ends or breaks (serve
// restarted, the connection cut, a line not as serve writes it, no
// window within the interval and StreamSlack) is opened again, at
// growing intervals, and note tells the user that it broke, came back,
// or was given up. The energy stays cumulative over a reconnection: the
// new stream's is added to what the old one had shown (the windows
// missed meanwhile are missing from it, not from the span).
func (r *Remote) Stream(ctx context.Context, f func(wire.SampleLine), note func(StreamNote)) error {
	var base, last power.Values
	broken, tries, breaks := false, 0, 0
	var broke time.Time
	name := fmt.Sprintf("node %s (%s)", r.Name(), r.URL())
	for {
		err := r.c.Stream(ctx, r.wait, r.silence, func(l wire.SampleLine) {
			if broken {
				broken = false
				note(StreamNote{State: StreamBack, Text: fmt.Sprintf("%s: its stream of windows is back after %.1f s; its live energy misses the windows meanwhile, its span does not", name, time.Since(broke).Seconds())})
			}
			last = base.Add(l.EnergyJoules.Values())
			l.EnergyJoules = wire.NewComponents(last, l.EnergyJoules.Has())
			f(l)
		})
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, io.EOF) {
			err = errors.New("the node ended it")
		}
		base = last
		if !broken {
			// A stream that worked broke: an outage begins.
			broken, tries, broke = true, 0, time.Now()
			if breaks++; breaks > maxBreaks {
				note(StreamNote{State: StreamGone, Text: fmt.Sprintf("%s: its stream of windows broke %d times, the last %v: exopower gave it up; its live row stops, its span and the summary do not", name, breaks, err)})
				return err
			}
			note(StreamNote{State: StreamBroke, Text: fmt.Sprintf("%s: its stream of windows broke (%v); reconnecting", name, err)})
		}
		if tries++; tries > retryTries {
			note(StreamNote{State: StreamGone, Text: fmt.Sprintf("%s: its stream of windows did not come back in %d tries (%v): exopower gave it up; its live row stops, its span and the summary do not", name, retryTries, err)})
			return err
		}
		t := time.NewTimer(retryFirst << (tries - 1))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}

// Close lets go of the connections kept for the node.
func (r *Remote) Close() { r.c.hc.CloseIdleConnections() }
