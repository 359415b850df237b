package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// noEdges counts the edges a request tells.
type noEdges struct{ sending, tokens, ended int }

func (e *noEdges) Sending(context.Context) { e.sending++ }
func (e *noEdges) Token()                  { e.tokens++ }
func (e *noEdges) Ended()                  { e.ended++ }

// serveRaw answers every request with body as a stream of events.
func serveRaw(t *testing.T, body string) *Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL + "/v1/chat/completions")
	return NewClient(u, Chat, "", time.Minute, Options{})
}

func TestTheTextOfAChunkIsFoundWhateverItsSpacing(t *testing.T) {
	for data, want := range map[string]bool{
		`{"choices":[{"delta":{"content":"Hi"}}]}`:                    true,
		`{"choices": [{"delta": {"content": "Hi"}}]}`:                 true,
		`{"choices":[{"delta":{"content":""}}]}`:                      false,
		`{"choices":[{"delta":{"content":null}}]}`:                    false,
		`{"choices":[{"delta":{"role":"assistant"}}]}`:                false,
		`{"choices":[{"text":" the"}]}`:                               true,
		`{"choices":[{"delta":{"reasoning_content":"hmm"}}]}`:         true,
		`{"choices":[{"delta":{"content":"say \"content\":\"\""}}]}`:  true,
		`{"choices":[{"delta":{"content":"", "x":"\"text\": \"y"}}]}`: false,
	} {
		if got := hasText([]byte(data)); got != want {
			t.Errorf("hasText(%s) = %v, want %v", data, got, want)
		}
	}
	for data, want := range map[string]bool{
		`{"choices":[{"delta":{"content":"a"},"finish_reason":null}],"usage":null}`: true,
		`{"choices":[{"delta":{},"finish_reason":"stop"}]}`:                         false,
		`{"choices":[],"usage":{"prompt_tokens":3}}`:                                false,
		`{"error":{"message":"boom"}}`:                                              false,
	} {
		if got := plain([]byte(data)); got != want {
			t.Errorf("plain(%s) = %v, want %v", data, got, want)
		}
	}
}

// Comments, CRLF line ends, data: without its space and a data field
// over two lines are all the event stream's grammar.
func TestTheEventStreamsGrammar(t *testing.T) {
	c := serveRaw(t, ": keep-alive\r\n\r\n"+
		"data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\r\n\r\n"+
		"data:{\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\n"+
		"event: message\nid: 3\ndata: {\"choices\":\ndata: [{\"delta\":{\"content\":\"lo\"}}]}\n\n"+
		"data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"length\"}]}\n\n"+
		"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":2,\"total_tokens\":9}}\n\n"+
		"data: [DONE]\n\n")
	var e noEdges
	a := c.Do(context.Background(), "m", Prompt{Text: "x"}, &e)
	if a.Err != nil || !a.Done || a.Pieces != 2 || !a.Usage || a.PromptTokens != 7 || a.CompletionTokens != 2 || a.FinishReason != "length" {
		t.Fatalf("answer %+v", a)
	}
	if e.sending != 1 || e.tokens != 1 || e.ended != 1 || a.First.IsZero() || a.Last.Before(a.First) || a.Sent.After(a.First) {
		t.Errorf("edges %+v, answer %+v", e, a)
	}
}

func TestWhatEndsAStreamBadly(t *testing.T) {
	piece := "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n"
	for _, c := range []struct {
		name, body, err, warning string
	}{
		{"no [DONE] after the end", piece + "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n", "", "without data: [DONE]"},
		{"cut off", piece, "ended before its last chunk", ""},
		{"not JSON", piece + "data: {not json\n\n", "not JSON: {not json", ""},
		{"an error mid-stream", piece + "data: {\"error\":{\"message\":\"out of memory\"}}\n\n", "mid-stream: out of memory", ""},
		{"a line too long", "data: \"" + strings.Repeat("x", MaxEvent+10) + "\"\n\n", "over 1024 KiB", ""},
	} {
		a := serveRaw(t, c.body).Do(context.Background(), "m", Prompt{Text: "x"}, &noEdges{})
		switch {
		case c.err != "" && (a.Err == nil || !strings.Contains(a.Err.Error(), c.err)):
			t.Errorf("%s: error %v, want %q", c.name, a.Err, c.err)
		case c.err == "" && a.Err != nil:
			t.Errorf("%s: error %v", c.name, a.Err)
		case c.warning != "" && !strings.Contains(strings.Join(a.Warnings, "\n"), c.warning):
			t.Errorf("%s: warnings %q, want %q", c.name, a.Warnings, c.warning)
		}
		if a.Pieces == 0 && c.name != "a line too long" {
			t.Errorf("%s: the piece before the end was lost", c.name)
		}
	}
}

// A server that says nothing is given up on after the stall bound, and
// the error says so.
func TestAStallIsBounded(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	u, _ := url.Parse(srv.URL)
	a := NewClient(u, Chat, "", 200*time.Millisecond, Options{}).Do(context.Background(), "m", Prompt{Text: "x"}, &noEdges{})
	if !errors.Is(a.Err, ErrStall) || a.Pieces != 1 {
		t.Errorf("answer %+v, want a stall after one piece", a)
	}
}

func TestEndpointFromWhatTheUserGave(t *testing.T) {
	for _, c := range []struct {
		raw  string
		api  API
		want string
		got  API
	}{
		{"http://127.0.0.1:8080", Chat, "http://127.0.0.1:8080/v1/chat/completions", Chat},
		{"http://127.0.0.1:8080/v1/", Completions, "http://127.0.0.1:8080/v1/completions", Completions},
		{"https://h/api/v1/chat/completions", Completions, "https://h/api/v1/chat/completions", Chat},
		{"http://h:1/v1/completions", Chat, "http://h:1/v1/completions", Completions},
	} {
		u, api, err := Endpoint(c.raw, c.api)
		if err != nil || u.String() != c.want || api != c.got {
			t.Errorf("Endpoint(%s) = %v %v %v, want %s %s", c.raw, u, api, err, c.want, c.got)
		}
	}
	for _, raw := range []string{"127.0.0.1:8080", "ftp://h/", "http://user:key@h/"} {
		if _, _, err := Endpoint(raw, Chat); err == nil {
			t.Errorf("Endpoint(%s) took it", raw)
		}
	}
}

// Comments alone do not hold off the stall bound: a server that keeps
// the line open and sends no data has stalled.
func TestCommentsAloneAreAStall(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for {
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	a := NewClient(u, Chat, "", 200*time.Millisecond, Options{}).Do(context.Background(), "m", Prompt{Text: "x"}, &noEdges{})
	if !errors.Is(a.Err, ErrStall) {
		t.Errorf("answer %+v, want a stall", a)
	}
}

// A key may come more than once: "content" in a chunk's logprobs before
// its delta's; an error may come as vLLM sends it.
func TestEveryOccurrenceOfAKeyCounts(t *testing.T) {
	if !hasText([]byte(`{"choices":[{"logprobs":{"content":null},"delta":{"content":"tok"}}]}`)) {
		t.Error("the delta's text after the logprobs' content was missed")
	}
	if plain([]byte(`{"object":"error","message":"CUDA out of memory"}`)) {
		t.Error("an error object read as a plain chunk")
	}
	c := serveRaw(t, "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n"+
		"data: {\"object\":\"error\",\"message\":\"CUDA out of memory\",\"type\":\"InternalServerError\",\"code\":500}\n\ndata: [DONE]\n\n")
	a := c.Do(context.Background(), "m", Prompt{Text: "x"}, &noEdges{})
	if a.Err == nil || !strings.Contains(a.Err.Error(), "CUDA out of memory") {
		t.Errorf("answer %+v", a)
	}
}

// The key goes to the endpoint's host alone: no proxy from the
// environment, which would take it too.
func TestTheClientTakesNoProxy(t *testing.T) {
	u, _ := url.Parse("http://192.0.2.1:8080/v1/chat/completions")
	c := NewClient(u, Chat, "k", time.Minute, Options{})
	if tr, ok := c.hc.Transport.(*http.Transport); !ok || tr.Proxy != nil {
		t.Errorf("transport %#v", c.hc.Transport)
	}
}
