package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// The key and the URL's credentials are the secrets: every piece of
// each taken out, as its own mark; a query's short values are words.
func TestTheKeyAndTheURLsCredentialsAreSecrets(t *testing.T) {
	const key = "sk-0123456789abcdef"
	u, _ := url.Parse("http://user0123:pass456@h/v1?api_key=qk-ABCDEFGHIJ&stream=true&code=x7Yz9Q")
	s := newSecrets(key, u)
	for _, c := range []struct{ in, want string }{
		{"key " + key + " end", "key [the key] end"},
		{"half " + key[:10], "half [the key]"},
		{"q=qk-ABCDEFGHIJ, code x7Yz9Q", "q=[redacted], code [redacted]"},
		{"user0123 pass456", "[redacted] [redacted]"},
		{"stream=true stays", "stream=true stays"},
	} {
		if got := s.Redact(c.in); got != c.want {
			t.Errorf("Redact(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// What exopower prints of the URL has no credential in it.
func TestWhereHidesTheURLsCredentials(t *testing.T) {
	for raw, want := range map[string]string{
		"http://127.0.0.1:8080/v1/chat/completions":          "http://127.0.0.1:8080/v1/chat/completions",
		"https://u:p@h/v1/completions?api_key=sk-1&x=2#frag": "https://h/v1/completions?api_key=[redacted]&x=[redacted]",
		"http://h/v1?sk-bare-key":                            "http://h/v1?[redacted]",
	} {
		u, _ := url.Parse(raw)
		if got := Where(u); got != want {
			t.Errorf("Where(%s) = %s, want %s", raw, got, want)
		}
	}
	for _, raw := range []string{"http://sk-secret:pw@[::1/v1?key=sk-secret", "http:/alice:s3cretPassw0rd@host:8080", "//alice:s3cretPassw0rd@host:8080/v1"} {
		if got := quoteURL(raw); strings.Contains(got, "secret") || strings.Contains(got, "s3cret") || !strings.Contains(got, "[redacted]@") {
			t.Errorf("quoteURL(%s) = %s", raw, got)
		}
	}
	// A query's value echoed as the request line quotes it, escaped.
	u, _ := url.Parse("http://h:8080/v1?api_key=Ab3dEf9%2BHk2mNp7%2FQr5tUv1")
	s := newSecrets("", u)
	for _, echo := range []string{"GET /v1?api_key=Ab3dEf9%2BHk2mNp7%2FQr5tUv1 HTTP/1.1", "key Ab3dEf9+Hk2mNp7/Qr5tUv1", "key Ab3dEf9 Hk2mNp7/Qr5tUv1"} {
		if got := s.Redact(echo); strings.Contains(got, "Hk2mNp7") || strings.Contains(got, "Qr5tUv1") {
			t.Errorf("Redact(%s) = %s", echo, got)
		}
	}
	// A key too short for its pieces is taken out where it stands alone.
	if got := newSecrets("k3y", nil).Redact("invalid api key: k3y, not k3yboard"); got != "invalid api key: [the key], not k3yboard" {
		t.Errorf("a short key: %s", got)
	}
}

// serveFunc answers every request with h.
func serveFunc(t *testing.T, stall time.Duration, h http.HandlerFunc) *Client {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL + "/v1/chat/completions")
	return NewClient(u, Chat, "", stall, Options{})
}

// flushed writes parts, each flushed on its own after a pause, so that
// the client reads them apart.
func flushed(w http.ResponseWriter, parts ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	for _, p := range parts {
		fmt.Fprint(w, p)
		w.(http.Flusher).Flush()
		time.Sleep(5 * time.Millisecond)
	}
}

// Lines may end with \r\n, \n or a lone \r, as the event stream's format
// allows, even when a \r and its \n come in reads of their own, and a
// field's name is split across reads.
func TestEveryLineEndOfTheEventStream(t *testing.T) {
	piece := `{"choices":[{"delta":{"content":"a"}}]}`
	end := `{"choices":[{"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":2,"completion_tokens":3}}`
	for name, parts := range map[string][]string{
		"a lone CR":           {"data: " + piece + "\r\rdata: " + piece + "\r\r: c\rdata: " + piece + "\r\rdata: " + end + "\r\rdata: [DONE]\r\r"},
		"CR and LF apart":     {"data: " + piece + "\r", "\n\r", "\ndata: " + piece + "\r\n\r\n", "data: " + piece + "\n\n", "data: " + end + "\r", "\n\r\ndata: [DONE]\r\n\r\n"},
		"a field cut in two":  {"da", "ta: " + piece + "\n", "\nd", "ata:", " " + piece + "\n\ndata: " + piece + "\n\ndata: " + end + "\n\ndata: [DONE]\n\n"},
		"data and : together": {"data:" + piece + "\n\n", "data: " + piece + "\n\ndata: " + piece + "\n\ndata:" + end + "\n\ndata:[DONE]\n\n"},
	} {
		c := serveFunc(t, time.Minute, func(w http.ResponseWriter, r *http.Request) { flushed(w, parts...) })
		a := c.Do(context.Background(), "m", Prompt{Text: "x"}, &noEdges{})
		if a.Err != nil || a.Pieces != 3 || !a.Done || a.FinishReason != "stop" || a.CompletionTokens != 3 {
			t.Errorf("%s: answer %+v", name, a)
		}
	}
}

// The answer's head is progress: a server that takes most of the stall
// bound to answer, then most of it again to its first token, is not
// cut off. Usage sent again and again is no progress: a server that
// sends it for ever is.
func TestWhatIsProgress(t *testing.T) {
	const stall = time.Second
	c := serveFunc(t, stall, func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(stall * 3 / 5)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		time.Sleep(stall * 3 / 5)
		chunksOf(w, 2)
	})
	if a := c.Do(context.Background(), "m", Prompt{Text: "x"}, &noEdges{}); a.Err != nil || a.Pieces != 2 {
		t.Errorf("a slow head: answer %+v", a)
	}
	c = serveFunc(t, 200*time.Millisecond, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n")
		for r.Context().Err() == nil {
			fmt.Fprint(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":1}}\n\n")
			w.(http.Flusher).Flush()
			time.Sleep(20 * time.Millisecond)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a guard, not a bound under test
	defer cancel()
	if a := c.Do(ctx, "m", Prompt{Text: "x"}, &noEdges{}); !errors.Is(a.Err, ErrStall) {
		t.Errorf("usage for ever: answer %+v, want a stall", a)
	}
}

// chunksOf writes n pieces of text and the end of a stream.
func chunksOf(w http.ResponseWriter, n int) {
	for range n {
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n")
	}
	fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
}

// A request that goes on for ever, a piece at a time, ends at its time
// limit, and says so.
func TestARequestEndsAtItsTimeLimit(t *testing.T) {
	c := serveFunc(t, time.Minute, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for r.Context().Err() == nil {
			fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n")
			w.(http.Flusher).Flush()
			time.Sleep(10 * time.Millisecond)
		}
	})
	c.Timeout = 300 * time.Millisecond
	a := c.Do(context.Background(), "m", Prompt{Text: "x"}, &noEdges{})
	if !errors.Is(a.Err, ErrTimeout) || !strings.Contains(a.Err.Error(), "--request-timeout 300ms") || a.Pieces == 0 {
		t.Errorf("answer %+v", a)
	}
}

// A long list of models is said in a line: its count and its first
// few; a list over MaxModelList is said to be that, not a cut JSON.
func TestALongListOfModelsIsSummarised(t *testing.T) {
	list := func(n int) string {
		var b strings.Builder
		b.WriteString(`{"object":"list","data":[`)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"id":"model-%d","object":"model","owned_by":"%s"}`, i, strings.Repeat("o", 30))
		}
		b.WriteString(`]}`)
		return b.String()
	}
	for n, want := range map[int]string{
		1:    "1 model: model-0",
		3:    "3 models: model-0, model-1, model-2",
		2000: "2000 models: model-0, model-1, model-2, model-3, model-4 and 1995 more",
	} {
		body := list(n)
		c := serveFunc(t, time.Minute, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, body) })
		l, err := c.Models(context.Background())
		got := c.Listed(l)
		if err != nil {
			got = err.Error()
		}
		if !strings.Contains(got, want) || len(got) > 300 {
			t.Errorf("%d models (%d bytes): %q, want %q", n, len(body), got, want)
		}
	}
	// Past its bound, a list is said to be too long, not cut JSON.
	if _, err := readModels(strings.NewReader(list(2000)), 64<<10); err == nil || err.Error() != "a list over 64 KiB, the most exopower reads" {
		t.Errorf("a list over the bound: %v", err)
	}
}

// A prompts file is read as requests take its prompts, from its start
// again after its end: the check before anything is sent reads only the
// prompts the run will take, and none is held.
func TestAPromptsFileIsReadAsTheRunNeedsIt(t *testing.T) {
	var b strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&b, "{\"prompt\": \"prompt %d %s\"}\n", i, strings.Repeat("w ", 500))
	}
	b.WriteString("not a prompt\n")
	file := &readCount{r: strings.NewReader(b.String())}
	p, err := OpenPrompts(file, "p.jsonl", 3)
	if err != nil {
		t.Fatal(err)
	}
	if file.n > 256<<10 || p.file.line != 0 {
		t.Errorf("checking 3 prompts read %d bytes of %d, and left the file at line %d", file.n, b.Len(), p.file.line)
	}
	for i := range 3 {
		if q, err := p.Next(i); err != nil || !strings.HasPrefix(q.Text, fmt.Sprintf("prompt %d ", i)) {
			t.Errorf("prompt %d: %.20q, %v", i, q.Text, err)
		}
	}
	if _, err := OpenPrompts(strings.NewReader(b.String()), "p.jsonl", 0); err == nil || !strings.Contains(err.Error(), "p.jsonl:2001: not a prompt") {
		t.Errorf("a run of no count checks every prompt: %v", err)
	}
	few, err := OpenPrompts(strings.NewReader("\"a\"\n\n{\"prompt\": \"b\"}\n\"c\""), "few", 0)
	var got []string
	for i := range 7 {
		q, _ := few.Next(i)
		got = append(got, q.Text)
	}
	if err != nil || strings.Join(got, "") != "abcabca" {
		t.Errorf("prompts in turn: %q, %v", got, err)
	}
}

// readCount counts the bytes read through it.
type readCount struct {
	r *strings.Reader
	n int
}

func (c *readCount) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

func (c *readCount) Seek(off int64, whence int) (int64, error) { return c.r.Seek(off, whence) }

// However the requests' rates come out (none, zero, huge, infinite, not
// a number), every share of a stretch is a finite part of it, and the
// shares sum to the whole.
func TestEverySharesIsFinite(t *testing.T) {
	rates := []float64{math.NaN(), 0, 1, 1e-300, 1e300, math.Inf(1), math.Inf(-1), -5, math.MaxFloat64}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 5000 {
		n := 1 + rng.IntN(5)
		segs := make([]segment, n)
		active := make([]int, n)
		for i := range segs {
			segs[i].rate, active[i] = rates[rng.IntN(len(rates))], i
		}
		sum := 0.0
		shares := sharesOf(segs, active)
		for _, s := range shares {
			if math.IsNaN(s) || math.IsInf(s, 0) || s < 0 {
				t.Fatalf("rates %v: shares %v", segs, shares)
			}
			sum += s
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Fatalf("rates %v: shares %v sum to %v", segs, shares, sum)
		}
	}
}

// The event a request may be sent shrinks as more are in flight, so that
// what they hold together stays within EventBudget.
func TestTheEventLimitSharesABudget(t *testing.T) {
	for n, want := range map[int]int{0: MaxEvent, 1: MaxEvent, 32: MaxEvent, 64: 512 << 10, 1024: MinEvent, 4096: MinEvent} {
		if got := EventLimit(n); got != want {
			t.Errorf("EventLimit(%d) = %d, want %d", n, got, want)
		}
	}
}

// A count beyond what a float64 holds is usage that cannot be true, not
// a chunk that cannot be read: the request ends well, counted from its
// pieces.
func TestUsageBeyondAnyNumberIsUsageThatCannotBeTrue(t *testing.T) {
	c := serveRaw(t, "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n"+
		"data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":1e400,\"completion_tokens\":1}}\n\ndata: [DONE]\n\n")
	a := c.Do(context.Background(), "m", Prompt{Text: "x"}, &noEdges{})
	if a.Err != nil || a.Usage || a.Pieces != 1 || !strings.Contains(strings.Join(a.Warnings, " "), "1e400 prompt") {
		t.Errorf("answer %+v", a)
	}
}
