package llm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/exopower/exopower/internal/output"
)

// read reads a stream of server-sent events to its end: data: [DONE],
// the end of the body, an error in it, or ctx's end. seen is called at
// every sign of progress (text, the end, the first usage), to hold off
// the stall bound: a server that sends only comments, empty events or
// the same usage again to keep the line open has stalled all the same.
func (c *Client) read(ctx context.Context, body io.Reader, a *Answer, edges Edges, seen func()) {
	s := &events{r: bufio.NewReaderSize(&capped{r: body, left: MaxResponse}, readBuffer), limit: EventLimit(c.InFlight)}
	for {
		data, err := s.next()
		if err != nil {
			c.ended(ctx, a, err)
			return
		}
		if c.event(data, a, edges, seen) {
			a.Ended = time.Now()
			return
		}
	}
}

// ended records how a stream that stopped without data: [DONE] ended.
func (c *Client) ended(ctx context.Context, a *Answer, err error) {
	a.Ended = time.Now()
	var big *tooBig
	switch {
	case errors.Is(err, errTooLong):
		a.Err = fmt.Errorf("an answer over %d MiB: exopower reads at most that much of one request", MaxResponse>>20)
	case errors.As(err, &big):
		a.Err = fmt.Errorf("an event over %d KiB: not a stream of chunks (exopower takes at most %d KiB an event with %s in flight)",
			big.limit>>10, big.limit>>10, output.Count(max(1, c.InFlight), "request"))
	case ctx.Err() != nil:
		a.Err = c.failed(ctx, http.MethodPost, c.URL, ctx.Err())
	case errors.Is(err, io.EOF) && a.FinishReason != "":
		a.Warnings = append(a.Warnings, "the stream ended without data: [DONE]")
	case errors.Is(err, io.EOF):
		a.Err = errors.New("the stream ended before its last chunk (no finish_reason, no data: [DONE])")
	case errors.Is(err, io.ErrUnexpectedEOF):
		a.Err = errors.New("the stream ended before its last chunk: the server closed the connection mid-answer")
	default:
		a.Err = fmt.Errorf("reading the stream: %w", err)
	}
}

// event takes one event's data; it reports the end of the stream. The
// server's words go into the answer as they came: Do makes them safe.
func (c *Client) event(data []byte, a *Answer, edges Edges, seen func()) bool {
	if string(data) == "[DONE]" {
		a.Done = true
		if a.FinishReason == "" && a.Err == nil {
			a.Warnings = append(a.Warnings, "the stream ended with data: [DONE] but no finish_reason")
		}
		return true
	}
	if !json.Valid(data) {
		a.Err = fmt.Errorf("an event that is not JSON: %s", data)
		return true
	}
	if plain(data) {
		// The common chunk: text or nothing, no usage, no end, no
		// error. Read without decoding, which would cost more than the
		// rest of the client.
		if hasText(data) {
			a.piece(edges)
			seen()
		}
		return false
	}
	var ch chunk
	if err := json.Unmarshal(data, &ch); err != nil {
		a.Err = fmt.Errorf("an event that is not a chunk: %v: %s", err, data)
		return true
	}
	if len(ch.Error) > 0 && string(ch.Error) != "null" || ch.Object == "error" {
		a.Err = fmt.Errorf("the server sent an error mid-stream: %s", errorMessage(data))
		return true
	}
	for _, choice := range ch.Choices {
		if choice.text() {
			a.piece(edges)
			seen()
		}
		if f := choice.FinishReason; f != nil && *f != "" {
			if a.FinishReason == "" {
				seen()
			}
			a.FinishReason = *f
		}
	}
	if ch.Usage != nil {
		if !a.Usage && a.badUsage == "" {
			seen()
		}
		a.takeUsage(ch.Usage)
	}
	return false
}

// piece counts a piece of text that came now.
func (a *Answer) piece(edges Edges) {
	now := time.Now()
	if a.First.IsZero() {
		a.First = now
		edges.Token()
	}
	a.Last = now
	a.Pieces++
}

type chunk struct {
	Object  string          `json:"object"`
	Choices []choice        `json:"choices"`
	Usage   *usage          `json:"usage"`
	Error   json.RawMessage `json:"error"`
}

type choice struct {
	Delta struct {
		Content          *string `json:"content"`
		ReasoningContent *string `json:"reasoning_content"`
		Reasoning        *string `json:"reasoning"`
	} `json:"delta"`
	Text         *string `json:"text"`
	FinishReason *string `json:"finish_reason"`
}

// text says the choice carries text: an answer's, or the reasoning a
// thinking model streams before it, which is generated all the same.
func (c choice) text() bool {
	for _, s := range []*string{c.Delta.Content, c.Delta.ReasoningContent, c.Delta.Reasoning, c.Text} {
		if s != nil && *s != "" {
			return true
		}
	}
	return false
}

// usage is a chunk's count of tokens. Its numbers are kept as JSON wrote
// them, whatever they are (1e11, 2^64, -3, 1.5, 1e400), for takeUsage
// to tell whether they can be counts of this answer's tokens: a number
// that does not fit a float64 is a usage that cannot be true, not a
// chunk that cannot be read.
type usage struct {
	PromptTokens        json.Number `json:"prompt_tokens"`
	CompletionTokens    json.Number `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens json.Number `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

// plain says a chunk, valid JSON, has no usage, no finish_reason and no
// error that would need decoding: then only its text matters.
func plain(data []byte) bool {
	for _, key := range []string{`"usage"`, `"finish_reason"`, `"error"`} {
		if anyValue(data, key, func(v []byte) bool { return !bytes.HasPrefix(v, []byte("null")) }) {
			return false
		}
	}
	return !anyValue(data, `"object"`, func(v []byte) bool { return bytes.HasPrefix(v, []byte(`"error"`)) })
}

// hasText says a chunk has a string of text that is not empty, under
// any of the keys that carry text.
func hasText(data []byte) bool {
	for _, key := range []string{`"content"`, `"text"`, `"reasoning_content"`, `"reasoning"`} {
		if anyValue(data, key, func(v []byte) bool { return len(v) > 1 && v[0] == '"' && v[1] != '"' }) {
			return true
		}
	}
	return false
}

// anyValue says whether any of key's values in data, as an object's key,
// is one that f takes: a key may come more than once, as "content" does
// in a chunk's logprobs and in its delta.
func anyValue(data []byte, key string, f func([]byte) bool) bool {
	for rest := data; ; {
		v, ok := valueAfter(rest, key)
		if !ok {
			return false
		}
		if f(v) {
			return true
		}
		rest = v
	}
}

// valueAfter is what follows key's first occurrence as an object's key
// in valid JSON data: the bytes of its value onwards. A key's quotes
// cannot occur unescaped inside a string, so the first match that a
// colon follows is the key.
func valueAfter(data []byte, key string) ([]byte, bool) {
	for rest := data; ; {
		i := bytes.Index(rest, []byte(key))
		if i < 0 {
			return nil, false
		}
		rest = skipSpace(rest[i+len(key):])
		if len(rest) > 0 && rest[0] == ':' {
			return skipSpace(rest[1:]), true
		}
	}
}

var errTooLong = errors.New("answer too long")

// tooBig is an event over the limit.
type tooBig struct{ limit int }

func (e *tooBig) Error() string { return fmt.Sprintf("an event over %d bytes", e.limit) }

// events reads a stream of server-sent events: lines that end with \r\n,
// \n or a lone \r (the format allows all three), a blank line ending an
// event. A data field's value goes straight into the event's data, at
// most limit bytes of it; other fields and comments are read and let go,
// so that a request holds no more than its read buffer and one event.
type events struct {
	r     *bufio.Reader
	limit int
	data  []byte
	// lf says the last line ended with \r: a \n first in the next line
	// belongs to that end. It is looked for when the next line is read,
	// not at once, which would wait for a byte that may not come yet.
	lf bool
}

// next is the data of the next event that has any; it is good until the
// next call.
func (s *events) next() ([]byte, error) {
	s.data = s.data[:0]
	for {
		blank, err := s.line()
		if err != nil {
			return nil, err
		}
		if blank && len(s.data) > 0 {
			return s.data, nil
		}
	}
}

// line reads one line, taking a data field's value into s.data; it
// reports whether the line was blank.
func (s *events) line() (blank bool, err error) {
	head, err := s.head()
	if len(head) == 0 {
		return false, err
	}
	data := bytes.HasPrefix(head, []byte("data:"))
	if data {
		s.r.Discard(5)
		if head, _ = s.head(); len(head) > 0 && head[0] == ' ' {
			s.r.Discard(1)
		}
		if len(s.data) > 0 {
			s.data = append(s.data, '\n')
		}
	}
	for n := 0; ; n++ {
		b, err := s.r.Peek(max(1, s.r.Buffered()))
		end := bytes.IndexAny(b, "\r\n")
		if end < 0 && len(b) > 0 {
			end = len(b)
		} else if end < 0 {
			return false, err
		}
		if data {
			if len(s.data)+end > s.limit {
				return false, &tooBig{s.limit}
			}
			s.data = append(s.data, b[:end]...)
		}
		if end == len(b) {
			s.r.Discard(end)
			continue
		}
		s.lf = b[end] == '\r'
		s.r.Discard(end + 1)
		return n == 0 && end == 0 && !data, nil
	}
}

// head peeks at the start of a line, after the \n of a \r\n that ended
// the last one: enough bytes to tell a data field (five) or the line's
// end, whichever comes first. It waits only for bytes of a line that has
// begun.
func (s *events) head() ([]byte, error) {
	for n := max(1, s.r.Buffered()); ; {
		b, err := s.r.Peek(n)
		if s.lf && len(b) > 0 {
			s.lf = false
			if b[0] == '\n' {
				s.r.Discard(1)
				n = max(1, s.r.Buffered())
				continue
			}
		}
		if len(b) >= 5 || bytes.ContainsAny(b, "\r\n") || err != nil {
			return b, err
		}
		n = len(b) + 1
	}
}

// capped reads at most left bytes of r, then fails with errTooLong.
type capped struct {
	r    io.Reader
	left int64
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, errTooLong
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// skipSpace is b after JSON's white space.
func skipSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r' || b[0] == '\n') {
		b = b[1:]
	}
	return b
}
