package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/exopower/exopower/internal/wire"
)

// Remote is a node reached through its exopower serve.
type Remote struct {
	c        *Client
	status   wire.Status
	rtt      time.Duration // the longest round trip of a plain request
	interval time.Duration
	opened   wire.Opened
	offset   time.Duration

	last    chan wire.Reading // the newest reading of the open span, one deep
	stop    chan struct{}
	stopped chan struct{}
}

// Connect asks the node for its status: a node that does not answer is
// known before anything starts.
func Connect(ctx context.Context, c *Client) (*Remote, error) {
	st, rtt, err := c.Status(ctx)
	if err != nil {
		return nil, err
	}
	return &Remote{c: c, status: st, rtt: rtt, interval: time.Duration(float64(st.IntervalSeconds) * float64(time.Second))}, nil
}

// Name is the node's own name for itself.
func (r *Remote) Name() string { return r.status.Node }

// URL is the node's address.
func (r *Remote) URL() string { return r.c.target.Name() }

// Begin opens the span, notes how far the node's clock is from this
// Mac's, and reads the span now and then as it goes, so that what was
// measured survives a node that stops answering.
func (r *Remote) Begin(ctx context.Context) error {
	o, _, err := r.c.Open(ctx)
	if err != nil {
		return err
	}
	started, err := time.Parse(time.RFC3339Nano, o.StartedAt)
	if err != nil {
		return fmt.Errorf("POST /v1/spans: not exopower serve's answer: started_at %q is no RFC 3339 time", o.StartedAt)
	}
	// The node stamped the start just before it answered, a one-way trip
	// (half a plain round trip) ago.
	r.offset = started.Sub(time.Now().Add(-r.rtt / 2))
	r.opened = o
	r.last = make(chan wire.Reading, 1)
	r.stop, r.stopped = make(chan struct{}), make(chan struct{})
	go r.poll()
	return nil
}

// pollEvery is how often an open span is read: often enough that a node
// lost mid-run leaves little unreported, seldom enough to cost nothing.
const pollEvery = time.Second

func (r *Remote) poll() {
	defer close(r.stopped)
	t := time.NewTicker(max(pollEvery, r.interval))
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), r.interval+EndSlack)
		rd, err := r.c.Read(ctx, r.opened.ID)
		cancel()
		if err == nil {
			select {
			case <-r.last:
			default:
			}
			r.last <- rd
		}
	}
}

// End closes the span: at most the node's interval and EndSlack, after
// which the node counts as lost, with what it measured by then.
func (r *Remote) End(ctx context.Context, at time.Time) wire.NodeSummary {
	close(r.stop)
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
	ctx, cancel := context.WithTimeout(ctx, r.interval+EndSlack)
	defer cancel()
	rd, _, err := r.c.End(ctx, r.opened.ID)
	lost := err != nil
	if lost {
		select {
		case rd = <-r.last:
		default:
			rd = wire.Reading{Summary: &wire.Summary{StartedAt: r.opened.StartedAt, Warnings: []string{}}}
		}
		rd.Warnings = append(rd.Warnings, "lost: "+errText(err))
	} else if _, rtt, err := r.c.Status(ctx); err == nil {
		r.rtt = max(r.rtt, rtt)
	}
	ended := ""
	if rd.EndedAt != nil {
		ended = *rd.EndedAt
	}
	var sum wire.Summary
	if rd.Summary != nil {
		sum = *rd.Summary
	}
	return wire.NodeSummary{Summary: &sum, Node: r.Name(), URL: r.URL(), EndedAt: ended,
		RoundTripSeconds: wire.Num(r.rtt.Seconds()), ClockOffsetSeconds: wire.Num(r.offset.Seconds()), Lost: lost}
}

func errText(err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return "no answer within its interval and " + EndSlack.String()
	}
	return err.Error()
}

// Stream hands f the node's windows as they come, until ctx ends or the
// node goes.
func (r *Remote) Stream(ctx context.Context, f func(wire.SampleLine)) error {
	return r.c.Stream(ctx, f)
}

// Close lets go of the connections kept for the node.
func (r *Remote) Close() { r.c.hc.CloseIdleConnections() }
