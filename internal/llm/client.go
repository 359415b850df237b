// Package llm is exopower llm: a benchmark of an OpenAI-compatible
// language-model server that measures each streamed request's energy,
// split at its first token into prefill (the prompt's processing) and
// decode (the generation), on this Mac and on every node, with the idle
// baseline, the statistics and the exports of exopower bench.
package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/exopower/exopower/internal/safe"
)

// The client's bounds on what a server may send. Each request in flight
// holds at most its answer's head (MaxHeader), its read buffer
// (readBuffer) and one event twice over (the line as it comes and the
// event's data), each at most EventLimit(c) for c requests in flight:
// docs/llm.md gives the sum at every -c.
const (
	// MaxEvent is the largest event a request may be sent when few are in
	// flight: a chunk is a few hundred bytes, a few KiB with logprobs.
	MaxEvent = 1 << 20
	// EventBudget is shared by the requests in flight: with more than 32
	// of them, each may be sent an event of EventBudget over their
	// number, and never less than MinEvent.
	EventBudget = 32 << 20
	MinEvent    = 32 << 10
	// MaxHeader bounds an answer's head: a model server's is under 1 KiB,
	// a proxy's a few. Go's own bound is some 10 MiB, which at -c 128
	// let a server take 1.9 GB of the Mac being measured.
	MaxHeader = 16 << 10
	// MaxResponse bounds the bytes read of one answer, however slowly
	// they come.
	MaxResponse = 64 << 20
	maxErrBody  = 64 << 10
	readBuffer  = 16 << 10
)

// EventLimit is the largest event a request may be sent when inFlight
// requests are in flight at most.
func EventLimit(inFlight int) int {
	return min(MaxEvent, max(MinEvent, EventBudget/max(1, inFlight)))
}

// API is the route a request takes.
type API string

// The routes exopower speaks.
const (
	Chat        API = "chat"
	Completions API = "completions"
)

// Client sends streamed requests to one OpenAI-compatible endpoint.
type Client struct {
	// URL is the endpoint, such as http://127.0.0.1:8080/v1/chat/completions.
	URL *url.URL
	API API
	// Key is sent as a bearer token, to URL's host only: no redirect is
	// followed.
	Key string
	// Stall bounds the wait for the answer's head and for each sign of
	// progress after it.
	Stall time.Duration
	// Timeout bounds a request from its send to its end; 0: no bound.
	Timeout time.Duration
	// InFlight is the most requests in flight at once, which sets the
	// largest event each may be sent (EventLimit).
	InFlight int
	// Options are passed through in every request's body.
	Options Options
	secrets *safe.Secrets
	hc      *http.Client
}

// Options are a request's settings, passed through as the server takes
// them; nil leaves the server's default.
type Options struct {
	MaxTokens   int
	Temperature *float64
	Seed        *int64
}

// Endpoint makes the URL of api from what the user gave: a base
// (http://host:8080 or http://host:8080/v1) gets the route's path; a
// full path of either route is taken as it is, and says the route.
func Endpoint(raw string, api API) (*url.URL, API, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, "", fmt.Errorf("%q is not an http:// or https:// URL of a server", quoteURL(raw))
	}
	if u.User != nil {
		return nil, "", fmt.Errorf("%s: a user or password in the URL is not how a model server takes its key: give the key in $OPENAI_API_KEY or --api-key-file", Where(u))
	}
	p := strings.TrimRight(u.Path, "/")
	switch {
	case strings.HasSuffix(p, "/chat/completions"):
		return u, Chat, nil
	case strings.HasSuffix(p, "/completions"):
		return u, Completions, nil
	case strings.HasSuffix(p, "/v1/models"):
		p = strings.TrimSuffix(p, "/models")
	case !strings.HasSuffix(p, "/v1"):
		p += "/v1"
	}
	if api == Completions {
		u.Path = p + "/completions"
	} else {
		u.Path, api = p+"/chat/completions", Chat
	}
	return u, api, nil
}

// quoteURL is raw, which is no URL exopower takes, without what may be
// a credential in it: whatever comes before an @ (a user and password,
// however mistyped the scheme before them), and a query.
func quoteURL(raw string) string {
	if i := strings.IndexAny(raw, "?#"); i >= 0 {
		raw = raw[:i]
	}
	if i := strings.LastIndex(raw, "@"); i >= 0 {
		scheme := ""
		if j := strings.Index(raw[:i], "://"); j >= 0 {
			scheme = raw[:j+3]
		}
		raw = scheme + urlMark + raw[i:]
	}
	return safe.Text(raw)
}

// NewClient is a client of u. It follows no redirect: an answer that
// sends elsewhere is an error that names where.
func NewClient(u *url.URL, api API, key string, stall time.Duration, opts Options) *Client {
	// No proxy from the environment: the key goes to u's host and
	// nowhere else. As many idle connections as requests in flight, so
	// that no request pays for a new one (and a TLS handshake) on the
	// Mac being measured.
	tr := &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 1024, ForceAttemptHTTP2: true,
		DialContext:         (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout: 10 * time.Second, MaxResponseHeaderBytes: MaxHeader}
	hc := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &Client{URL: u, API: api, Key: key, Stall: stall, Options: opts, secrets: newSecrets(key, u), hc: hc}
}

// Prompt is what one request asks: a chat's messages, or a completion's
// prompt.
type Prompt struct {
	Messages []Message `json:"messages,omitempty"`
	Text     string    `json:"prompt,omitempty"`
}

// Message is one message of a chat.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// body is the request's JSON.
func (c *Client) body(model string, p Prompt, opts Options) ([]byte, error) {
	m := map[string]any{"model": model, "stream": true, "stream_options": map[string]bool{"include_usage": true}}
	if c.API == Completions {
		m["prompt"] = p.text()
	} else {
		m["messages"] = p.messages()
	}
	if opts.MaxTokens > 0 {
		m["max_tokens"] = opts.MaxTokens
	}
	if opts.Temperature != nil {
		m["temperature"] = *opts.Temperature
	}
	if opts.Seed != nil {
		m["seed"] = *opts.Seed
	}
	return json.Marshal(m)
}

func (p Prompt) text() string {
	if p.Text != "" || len(p.Messages) == 0 {
		return p.Text
	}
	var parts []string
	for _, m := range p.Messages {
		parts = append(parts, m.Content)
	}
	return strings.Join(parts, "\n\n")
}

func (p Prompt) messages() []Message {
	if len(p.Messages) > 0 {
		return p.Messages
	}
	return []Message{{Role: "user", Content: p.Text}}
}

// Edges are told of a request's edges as they happen, so that the meter
// can end a window there: before it is sent (Sending may wait for that),
// at its first token and at its end.
type Edges interface {
	Sending(ctx context.Context)
	Token()
	Ended()
}

// Answer is what one streamed request gave and when. Its strings are
// safe to print and store: the key and the URL's credentials taken out,
// control characters escaped.
type Answer struct {
	// Sent is when the request left; First and Last when its first and
	// last pieces of text came (zero when none came); Ended when its
	// stream ended.
	Sent, First, Last, Ended time.Time
	// Pieces counts the events that carried text.
	Pieces int
	// PromptTokens and CompletionTokens are the server's counts (its
	// usage); Usage says it gave them, and that they can be true of the
	// answer (see judgeUsage).
	PromptTokens, CompletionTokens int
	Usage                          bool
	// CachedTokens are the prompt's tokens that the server took from its
	// cache (usage.prompt_tokens_details.cached_tokens): not processed.
	CachedTokens int
	FinishReason string
	// Done says the stream ended with data: [DONE].
	Done bool
	// Err is why the request failed; nil when it ended as it should.
	Err error
	// Warnings are what was odd but not fatal.
	Warnings []string

	// badUsage is why the last usage the server gave cannot be read as
	// counts of tokens, "" when it can.
	badUsage string
}

// StatusError is a server's answer other than 200.
type StatusError struct {
	Code int
	// Message is the server's own, made safe to print.
	Message string
}

func (e *StatusError) Error() string {
	s := fmt.Sprintf("the server answered %d %s", e.Code, http.StatusText(e.Code))
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

var (
	// ErrInterrupted is a request that a signal cut short.
	ErrInterrupted = errors.New("interrupted before its end")
	// ErrDurationOver is a request in flight when --duration ended, cut
	// short there.
	ErrDurationOver = errors.New("cut short at the end of --duration")
	// ErrStall is a server that sent no data for the stall bound.
	ErrStall = errors.New("the server sent no data")
	// ErrTimeout is a request that took longer than its bound.
	ErrTimeout = errors.New("the request took too long")
)

// Do sends one streamed request of model with prompt p and reads its
// stream to the end, telling edges of its edges. ctx ends it early (its
// answer then says so: ErrInterrupted, or ErrDurationOver when ctx's
// cause is that).
func (c *Client) Do(ctx context.Context, model string, p Prompt, edges Edges) Answer {
	a := c.do(ctx, model, p, edges, c.Options)
	a.Err, a.FinishReason = c.scrub(a.Err), c.text(a.FinishReason)
	judgeUsage(&a)
	return a
}

func (c *Client) do(ctx context.Context, model string, p Prompt, edges Edges, opts Options) Answer {
	var a Answer
	body, err := c.body(model, p, opts)
	if err != nil {
		a.Err = err
		return a
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if c.Timeout > 0 {
		var stop context.CancelFunc
		ctx, stop = context.WithTimeoutCause(ctx, c.Timeout, fmt.Errorf("%w: it ran for --request-timeout %v", ErrTimeout, c.Timeout))
		defer stop()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL.String(), bytes.NewReader(body))
	if err != nil {
		a.Err = err
		return a
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if c.Key != "" {
		req.Header.Set("Authorization", "Bearer "+c.Key)
	}
	edges.Sending(ctx)
	// The stall bound runs from the send: a server that takes the
	// request and says nothing is cut off as one that stops mid-stream.
	watch := time.AfterFunc(c.Stall, func() { cancel(fmt.Errorf("%w for %v", ErrStall, c.Stall)) })
	defer watch.Stop()
	a.Sent = time.Now()
	resp, err := c.hc.Do(req)
	if err != nil {
		a.Err, a.Ended = c.failed(ctx, http.MethodPost, c.URL, err), time.Now()
		return a
	}
	defer resp.Body.Close()
	// The answer's head is progress: the bound starts again.
	watch.Reset(c.Stall)
	if err := c.check(resp); err != nil {
		a.Err, a.Ended = err, time.Now()
		return a
	}
	c.read(ctx, resp.Body, &a, edges, func() { watch.Reset(c.Stall) })
	edges.Ended()
	if cut := cutBy(ctx); a.Err != nil && cut != nil {
		a.Err = cut
	}
	return a
}

// cutBy is why the caller cut a request short, nil when it did not: a
// signal (ErrInterrupted) or the end of --duration (ErrDurationOver).
func cutBy(ctx context.Context) error {
	if ctx.Err() == nil {
		return nil
	}
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, ErrDurationOver):
		return ErrDurationOver
	case errors.Is(cause, context.Canceled):
		return ErrInterrupted
	}
	return nil
}

// failed is err, a request of u that got no answer, or the reason ctx
// ended it for (a stall, the request's time), with the endpoint's
// address.
func (c *Client) failed(ctx context.Context, method string, u *url.URL, err error) error {
	if cut := cutBy(ctx); cut != nil {
		return cut
	}
	if cause := context.Cause(ctx); cause != nil {
		err = cause
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return fmt.Errorf("%s %s: %w", method, Where(u), err)
}

// check refuses an answer that is not a stream of events: a status
// other than 200 (with the server's message), a redirect (named, not
// followed), or one JSON object where a stream was asked for.
func (c *Client) check(resp *http.Response) error {
	where := Where(c.URL)
	if resp.StatusCode/100 == 3 {
		to := "nowhere it says"
		if loc, err := resp.Location(); err == nil {
			to = Where(loc)
		}
		return fmt.Errorf("POST %s: the server answered %d %s to %s: exopower follows no redirect, so that the key goes only where it was given; give that URL if it is the server's",
			where, resp.StatusCode, http.StatusText(resp.StatusCode), to)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrBody))
		return fmt.Errorf("POST %s: %w", where, &StatusError{Code: resp.StatusCode, Message: c.text(errorMessage(b))})
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		return fmt.Errorf("POST %s: the server answered %q, not a stream of events (text/event-stream): exopower needs a streamed answer to find the first token; check that the server streams this route", where, ct)
	}
	return nil
}

// scrubbed is an error whose words are safe to print (Client.text). It
// unwraps to what callers tell errors apart by, a sentinel or a
// StatusError (whose message is safe too), and to nothing else, so that
// no raw word of the server's can be reached through it.
type scrubbed struct {
	msg   string
	cause error
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.cause }

// scrub is err with its words made safe to print: the one funnel of
// every error that a request or the list of models ends with.
func (c *Client) scrub(err error) error {
	if err == nil || err == ErrInterrupted || err == ErrDurationOver {
		return err
	}
	s := &scrubbed{msg: c.text(err.Error())}
	var se *StatusError
	switch {
	case errors.As(err, &se):
		s.cause = se
	case errors.Is(err, ErrStall):
		s.cause = ErrStall
	case errors.Is(err, ErrTimeout):
		s.cause = ErrTimeout
	}
	return s
}

// errorMessage is the message of an OpenAI error body, or the body's
// text, as the server gave it: Client.text makes it safe.
func errorMessage(b []byte) string {
	var e struct {
		Error   json.RawMessage `json:"error"`
		Object  string          `json:"object"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(b, &e) == nil && e.Object == "error" && e.Message != "" {
		// vLLM's and others' shape: {"object": "error", "message": ...}.
		return e.Message
	}
	if json.Unmarshal(b, &e) == nil && len(e.Error) > 0 {
		var obj struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(e.Error, &obj) == nil && obj.Message != "":
			return obj.Message
		case json.Unmarshal(e.Error, &s) == nil && s != "":
			return s
		}
	}
	return strings.TrimSpace(string(b))
}
