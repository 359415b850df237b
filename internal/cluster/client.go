package cluster

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/exopower/exopower/internal/wire"
)

// exopower's own limits on what a node may take and send. A node's claims
// (its interval above all) shorten a wait, never lengthen it past these:
// a node is a machine on the network, and one that hangs, trickles or
// boasts must cost the run a bounded wait, not the run.
const (
	// StatusWait bounds a request the node answers at once: its status,
	// the reading of an open span, the head of its stream of windows.
	StatusWait = 5 * time.Second
	// MaxWindowWait bounds the part of a wait that is the node's
	// interval: ending a span waits for the window that covers its end,
	// and a node of a 1 h interval is not waited for an hour.
	MaxWindowWait = 10 * time.Second
	// StreamSlack is how long past its interval a node's stream may go
	// without a window before it counts as broken: as long as serve
	// gives a line to reach its client.
	StreamSlack = 10 * time.Second
	// maxAnswer bounds an answer's body: exopower serve's are a few KB.
	maxAnswer = 1 << 20
	// maxLine bounds a line of a stream of windows: serve's are under
	// 1 KB.
	maxLine = 64 << 10
	// maxHeader bounds an answer's headers: serve's are a few hundred
	// bytes.
	maxHeader = 64 << 10
)

// Wait is how long a request that waits for one of a node's windows
// (opening a span, ending it) may take, for a node sampled every
// interval: the interval, at most MaxWindowWait, and EndSlack.
func Wait(interval time.Duration) time.Duration { return min(interval, MaxWindowWait) + EndSlack }

// Client talks to one node's exopower serve. It follows no redirect, so
// that credentials go nowhere but the URL they were given for, and takes
// no answer on trust: each is checked as the powermetrics decoder checks
// a document, and the text in it made safe for a terminal.
type Client struct {
	target Target
	hc     *http.Client
	cred   *Credentials
}

// NewClient returns a client of the serve that t names.
func NewClient(t Target, auth Auth, tlsConf *tls.Config) *Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	// Each transport its own copy: setting up HTTP/2 writes into it.
	tr.TLSClientConfig = tlsConf.Clone()
	tr.Proxy = nil // a node is reached directly
	tr.MaxResponseHeaderBytes = maxHeader
	hc := &http.Client{Transport: tr,
		// A redirect is an error that names where it points: followed,
		// another serve would be measured under this URL, and the
		// credentials sent to wherever it says, in clear text if it
		// says http.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &Client{target: t, hc: hc, cred: auth.forTarget(t)}
}

// Status asks the node how it is; it reports the round trip.
func (c *Client) Status(ctx context.Context) (wire.Status, time.Duration, error) {
	var st wire.Status
	const what = "GET /v1/status"
	rtt, err := c.do(ctx, http.MethodGet, "/v1/status", &st)
	if err == nil {
		err = notServe(what, checkStatus(&st))
	}
	return st, rtt, err
}

// Open opens a span on the node.
func (c *Client) Open(ctx context.Context) (wire.Opened, time.Duration, error) {
	var o wire.Opened
	rtt, err := c.do(ctx, http.MethodPost, "/v1/spans", &o)
	if err == nil {
		err = notServe("POST /v1/spans", checkOpened(&o))
	}
	return o, rtt, err
}

// Read reads an open span so far.
func (c *Client) Read(ctx context.Context, id string) (wire.Reading, error) {
	var r wire.Reading
	_, err := c.do(ctx, http.MethodGet, "/v1/spans/"+url.PathEscape(id), &r)
	if err == nil {
		err = notServe("GET /v1/spans/ID", checkReading(&r, false))
	}
	return r, err
}

// End ends a span and returns the node's measurement of it.
func (c *Client) End(ctx context.Context, id string) (wire.Reading, time.Duration, error) {
	var r wire.Reading
	rtt, err := c.do(ctx, http.MethodPost, "/v1/spans/"+url.PathEscape(id)+"/end", &r)
	if err == nil {
		err = notServe("POST /v1/spans/ID/end", checkReading(&r, true))
	}
	return r, rtt, err
}

// ErrNotServe is the error of an answer that is not as exopower serve
// gives it: a node that answers so is a bad node, refused at the start
// and lost mid-run.
var ErrNotServe = errors.New("not exopower serve's answer")

// notServe says that what answered otherwise than exopower serve does,
// and why; nil when why is.
func notServe(what string, why error) error {
	if why == nil {
		return nil
	}
	return fmt.Errorf("%s: %w: %w", what, ErrNotServe, why)
}

// request is a request of path to the node, with its credentials.
func (c *Client) request(ctx context.Context, method, path string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.target.URL.String()+path, nil)
	if err != nil {
		return nil, err
	}
	if c.cred != nil {
		req.SetBasicAuth(c.cred.User, c.cred.Password)
	}
	return req, nil
}

func (c *Client) do(ctx context.Context, method, path string, out any) (time.Duration, error) {
	// Whatever the caller asked, no answer is waited for longer than
	// the longest wait exopower allows for a window.
	ctx, cancel := context.WithTimeout(ctx, MaxWindowWait+EndSlack)
	defer cancel()
	req, err := c.request(ctx, method, path)
	if err != nil {
		return 0, err
	}
	t0 := time.Now()
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	// The context bounds the body too: a node that sends its headers
	// and then trickles, or nothing, is cut off with the rest.
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	rtt := time.Since(t0)
	if err != nil {
		return rtt, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if err := answerStatus(method+" "+path, resp); err != nil {
		if e := (wire.Error{}); json.Unmarshal(body, &e) == nil && e.Error != "" && resp.StatusCode/100 != 3 {
			return rtt, fmt.Errorf("%w: %s", err, clean(e.Error))
		}
		return rtt, err
	}
	if len(body) > maxAnswer {
		return rtt, notServe(method+" "+path, fmt.Errorf("an answer over %d KiB, where exopower serve's are a few KB", maxAnswer>>10))
	}
	if err := json.Unmarshal(body, out); err != nil {
		return rtt, notServe(method+" "+path, err)
	}
	return rtt, nil
}

// answerStatus is the error an answer's status says, what naming the
// request; nil for 2xx. The status is given by its number and Go's name
// for it: the reason phrase is the node's text.
func answerStatus(what string, resp *http.Response) error {
	code := resp.StatusCode
	status := fmt.Sprintf("%d %s", code, http.StatusText(code))
	switch {
	case code/100 == 2:
		return nil
	case code/100 == 3:
		where := "nowhere it says"
		if loc, err := resp.Location(); err == nil {
			where = clean(loc.Redacted())
		}
		return fmt.Errorf("%s: %s to %s: %w: exopower follows no redirect from a node (its credentials go only to the URL given); if that is the node's serve, give that URL with --node", what, status, where, ErrNotServe)
	}
	return fmt.Errorf("%s: %s", what, status)
}

// Stream reads the node's windows as they come (GET /v1/windows) and
// hands each to f, until ctx ends (nil), the node ends the stream
// (io.EOF), or something is wrong with it: no answer within head, no
// window within silence, a line over 64 KiB or not as exopower serve
// writes it.
func (c *Client) Stream(ctx context.Context, head, silence time.Duration, f func(wire.SampleLine)) error {
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	l := &streamLimit{parent: parent, cancel: cancel}
	l.arm("no answer", head)
	defer func() { l.timer.Stop() }()
	req, err := c.request(ctx, http.MethodGet, "/v1/windows")
	if err != nil {
		return err
	}
	sent := time.Now()
	resp, err := c.hc.Do(req)
	if err != nil {
		return l.ended(err)
	}
	defer resp.Body.Close()
	if err := answerStatus(streamWhat, resp); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return notServe(streamWhat, fmt.Errorf("%d %s, where exopower serve answers 200", resp.StatusCode, http.StatusText(resp.StatusCode)))
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 4<<10), maxLine)
	for {
		if !l.timer.Stop() {
			l.fired.Store(true)
			return l.ended(nil)
		}
		l.arm("no window", silence)
		if !sc.Scan() {
			break
		}
		var line wire.SampleLine
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			return notServe(streamWhat, err)
		}
		if err := checkLine(&line, time.Since(sent)); err != nil {
			return notServe(streamWhat, err)
		}
		f(line)
	}
	switch err := sc.Err(); {
	case errors.Is(err, bufio.ErrTooLong):
		return notServe(streamWhat, fmt.Errorf("a line over %d KiB, where exopower serve's are under 1 KiB", maxLine>>10))
	case err != nil:
		return l.ended(fmt.Errorf("%s: %w", streamWhat, err))
	}
	return l.ended(io.EOF)
}

// streamWhat names Stream's request in its errors.
const streamWhat = "GET /v1/windows"

// streamLimit is Stream's one limit at a time: the answer's head, then
// each line. When the limit armed passes, the stream's request is
// cancelled, and msg says which limit it was.
type streamLimit struct {
	parent context.Context
	cancel context.CancelFunc
	fired  atomic.Bool
	msg    string
	timer  *time.Timer
}

// arm sets the limit d, why saying what did not come within it.
func (l *streamLimit) arm(why string, d time.Duration) {
	l.msg = fmt.Sprintf("%s: %s within %v", streamWhat, why, d)
	l.timer = time.AfterFunc(d, func() { l.fired.Store(true); l.cancel() })
}

// ended is what the stream's end, err, comes to: nil when the caller's
// context ended it, the limit's message when a limit passed.
func (l *streamLimit) ended(err error) error {
	switch {
	case l.parent.Err() != nil:
		return nil
	case l.fired.Load():
		return errors.New(l.msg)
	}
	return err
}
