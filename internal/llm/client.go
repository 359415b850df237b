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

	"github.com/exopower/exopower/internal/cluster"
)

// The client's bounds on what a server may send: a stream's event (a
// chunk is a few hundred bytes), a whole answer, and an error's body.
const (
	MaxEvent    = 1 << 20
	MaxResponse = 64 << 20
	maxErrBody  = 64 << 10
)

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
	// Stall bounds the wait for the answer's head and for each event
	// after it.
	Stall time.Duration
	// Options are passed through in every request's body.
	Options Options
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
		return nil, "", fmt.Errorf("%q is not an http:// or https:// URL of a server", raw)
	}
	if u.User != nil {
		return nil, "", fmt.Errorf("%s: a key in the URL would be printed and stored: give it in $OPENAI_API_KEY or --api-key-file", u.Redacted())
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

// NewClient is a client of u. It follows no redirect: an answer that
// sends elsewhere is an error that names where.
func NewClient(u *url.URL, api API, key string, stall time.Duration, opts Options) *Client {
	// No proxy from the environment: the key goes to u's host and
	// nowhere else. As many idle connections as requests in flight, so
	// that no request pays for a new one (and a TLS handshake) on the
	// Mac being measured.
	tr := &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 1024, ForceAttemptHTTP2: true,
		DialContext:         (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout: 10 * time.Second}
	hc := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &Client{URL: u, API: api, Key: key, Stall: stall, Options: opts, hc: hc}
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
func (c *Client) body(model string, p Prompt) ([]byte, error) {
	m := map[string]any{"model": model, "stream": true, "stream_options": map[string]bool{"include_usage": true}}
	if c.API == Completions {
		m["prompt"] = p.text()
	} else {
		m["messages"] = p.messages()
	}
	if c.Options.MaxTokens > 0 {
		m["max_tokens"] = c.Options.MaxTokens
	}
	if c.Options.Temperature != nil {
		m["temperature"] = *c.Options.Temperature
	}
	if c.Options.Seed != nil {
		m["seed"] = *c.Options.Seed
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

// Answer is what one streamed request gave and when.
type Answer struct {
	// Sent is when the request left; First and Last when its first and
	// last pieces of text came (zero when none came); Ended when its
	// stream ended.
	Sent, First, Last, Ended time.Time
	// Pieces counts the events that carried text.
	Pieces int
	// PromptTokens and CompletionTokens are the server's counts (its
	// usage); Usage says it gave them.
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
}

// StatusError is a server's answer other than 200.
type StatusError struct {
	Code    int
	Message string
}

func (e *StatusError) Error() string {
	s := fmt.Sprintf("the server answered %d %s", e.Code, http.StatusText(e.Code))
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// ErrInterrupted is a request that a signal cut short.
var ErrInterrupted = errors.New("interrupted before its end")

// ErrStall is a server that sent no data for the stall bound.
var ErrStall = errors.New("the server sent no data")

// Do sends one streamed request of model with prompt p and reads its
// stream to the end, telling edges of its edges. ctx ends it early (its
// answer then says so).
func (c *Client) Do(ctx context.Context, model string, p Prompt, edges Edges) Answer {
	var a Answer
	body, err := c.body(model, p)
	if err != nil {
		a.Err = err
		return a
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
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
		a.Err = c.failed(ctx, err)
		if errors.Is(context.Cause(ctx), context.Canceled) {
			a.Err = ErrInterrupted
		}
		a.Ended = time.Now()
		return a
	}
	defer resp.Body.Close()
	if err := c.check(resp); err != nil {
		a.Err, a.Ended = err, time.Now()
		return a
	}
	c.read(ctx, resp.Body, &a, edges, func() { watch.Reset(c.Stall) })
	edges.Ended()
	if a.Err != nil {
		if msg := a.Err.Error(); c.redact(msg) != msg {
			a.Err = errors.New(c.redact(msg))
		}
		if errors.Is(context.Cause(ctx), context.Canceled) && ctx.Err() != nil {
			a.Err = ErrInterrupted
		}
	}
	return a
}

// failed is err, or the reason ctx was cancelled for (a stall), with
// the endpoint's address.
func (c *Client) failed(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		err = cause
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return fmt.Errorf("POST %s: %w", c.URL.Redacted(), err)
}

// check refuses an answer that is not a stream of events: a status
// other than 200 (with the server's message), a redirect (named, not
// followed), or one JSON object where a stream was asked for.
func (c *Client) check(resp *http.Response) error {
	if resp.StatusCode/100 == 3 {
		where := "nowhere it says"
		if loc, err := resp.Location(); err == nil {
			where = cluster.Clean(loc.Redacted())
		}
		return fmt.Errorf("POST %s: the server answered %d %s to %s: exopower follows no redirect, so that the key goes only where it was given; give that URL if it is the server's",
			c.URL.Redacted(), resp.StatusCode, http.StatusText(resp.StatusCode), where)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrBody))
		return fmt.Errorf("POST %s: %w", c.URL.Redacted(), &StatusError{Code: resp.StatusCode, Message: c.redact(errorMessage(b))})
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		return fmt.Errorf("POST %s: the server answered %q, not a stream of events (text/event-stream): exopower needs a streamed answer to find the first token; check that the server streams this route", c.URL.Redacted(), cluster.Clean(ct))
	}
	return nil
}

// redact takes the key out of a server's text: a server may echo what it
// was sent.
func (c *Client) redact(s string) string {
	if len(c.Key) < 4 {
		return s
	}
	return strings.ReplaceAll(s, c.Key, "[the key]")
}

// errorMessage is the message of an OpenAI error body, or the body's
// text, made safe to print.
func errorMessage(b []byte) string {
	var e struct {
		Error   json.RawMessage `json:"error"`
		Object  string          `json:"object"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(b, &e) == nil && e.Object == "error" && e.Message != "" {
		// vLLM's and others' shape: {"object": "error", "message": ...}.
		return cluster.Clean(e.Message)
	}
	if json.Unmarshal(b, &e) == nil && len(e.Error) > 0 {
		var obj struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(e.Error, &obj) == nil && obj.Message != "":
			return cluster.Clean(obj.Message)
		case json.Unmarshal(e.Error, &s) == nil && s != "":
			return cluster.Clean(s)
		}
	}
	return cluster.Clean(strings.TrimSpace(string(b)))
}

// Models asks the server which models it serves (GET /v1/models, beside
// the endpoint). It is also the check that the server answers before
// anything is measured: an error names the endpoint and why.
func (c *Client) Models(ctx context.Context) ([]string, error) {
	u := *c.URL
	u.Path = strings.TrimSuffix(strings.TrimSuffix(strings.TrimRight(u.Path, "/"), "/chat/completions"), "/completions") + "/models"
	u.RawQuery = ""
	ctx, cancel := context.WithTimeout(ctx, min(c.Stall, 30*time.Second))
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	if c.Key != "" {
		req.Header.Set("Authorization", "Bearer "+c.Key)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("GET %s: %w", u.Redacted(), err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxErrBody*16))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", u.Redacted(), err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %w", u.Redacted(), &StatusError{Code: resp.StatusCode, Message: c.redact(errorMessage(body))})
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("GET %s: not a list of models: %w", u.Redacted(), err)
	}
	var ids []string
	for _, m := range list.Data {
		ids = append(ids, cluster.Clean(m.ID))
	}
	return ids, nil
}
