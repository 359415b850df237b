package llm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/exopower/exopower/internal/cluster"
)

// read reads a stream of server-sent events to its end: data: [DONE],
// the end of the body, an error in it, or ctx's end. seen is called at
// every sign of progress (text, an end, usage), to hold off the stall
// bound: a server that sends only comments or empty events to keep the
// line open has stalled all the same.
func (c *Client) read(ctx context.Context, body io.Reader, a *Answer, edges Edges, seen func()) {
	r := bufio.NewReaderSize(&capped{r: body, left: MaxResponse}, 64<<10)
	var data []byte
	for {
		line, err := readLine(r)
		if err != nil {
			c.ended(ctx, a, err)
			return
		}
		switch {
		case len(line) == 0:
			// A blank line ends an event.
			if len(data) > 0 {
				if c.event(data, a, edges, seen) {
					a.Ended = time.Now()
					return
				}
				data = data[:0]
			}
		case line[0] == ':':
			// A comment, which some servers send to keep the line open.
		case bytes.HasPrefix(line, []byte("data:")):
			v := bytes.TrimPrefix(line[5:], []byte(" "))
			if len(data) > 0 {
				data = append(data, '\n')
			}
			if len(data)+len(v) > MaxEvent {
				a.Err, a.Ended = fmt.Errorf("an event over %d KiB: not a stream of chunks (exopower takes at most %d KiB an event)", MaxEvent>>10, MaxEvent>>10), time.Now()
				return
			}
			data = append(data, v...)
		}
		// Other fields (event:, id:, retry:) say nothing exopower needs.
	}
}

// ended records how a stream that stopped without data: [DONE] ended.
func (c *Client) ended(ctx context.Context, a *Answer, err error) {
	a.Ended = time.Now()
	switch {
	case errors.Is(err, errTooLong):
		a.Err = fmt.Errorf("an answer over %d MiB: exopower reads at most that much of one request", MaxResponse>>20)
	case errors.Is(err, errLongLine):
		a.Err = fmt.Errorf("a line over %d KiB: not a stream of chunks", MaxEvent>>10)
	case ctx.Err() != nil && errors.Is(context.Cause(ctx), context.Canceled):
		a.Err = ErrInterrupted
	case ctx.Err() != nil:
		a.Err = c.failed(ctx, ctx.Err())
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

// event takes one event's data; it reports the end of the stream.
func (c *Client) event(data []byte, a *Answer, edges Edges, seen func()) bool {
	if string(data) == "[DONE]" {
		a.Done = true
		if a.FinishReason == "" && a.Err == nil {
			a.Warnings = append(a.Warnings, "the stream ended with data: [DONE] but no finish_reason")
		}
		return true
	}
	if !json.Valid(data) {
		a.Err = fmt.Errorf("an event that is not JSON: %s", cluster.Clean(string(data)))
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
		a.Err = fmt.Errorf("an event that is not a chunk: %v: %s", err, cluster.Clean(string(data)))
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
		if choice.FinishReason != nil && *choice.FinishReason != "" {
			a.FinishReason = *choice.FinishReason
			seen()
		}
	}
	if u := ch.Usage; u != nil && (u.PromptTokens < 0 || u.CompletionTokens < 0) {
		a.Warnings = append(a.Warnings, fmt.Sprintf("the server's usage gave negative counts (%d prompt, %d completion tokens): not used", u.PromptTokens, u.CompletionTokens))
		ch.Usage = nil
	}
	if ch.Usage != nil {
		seen()
		a.Usage, a.PromptTokens, a.CompletionTokens = true, ch.Usage.PromptTokens, ch.Usage.CompletionTokens
		if d := ch.Usage.PromptTokensDetails; d != nil {
			a.CachedTokens = d.CachedTokens
		}
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

type usage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
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

var (
	errTooLong  = errors.New("answer too long")
	errLongLine = errors.New("line too long")
)

// readLine reads a line without its end (\n or \r\n), at most MaxEvent.
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		part, err := r.ReadSlice('\n')
		if err == nil && line == nil {
			// The common case, a line whole in the buffer: no copy. It is
			// good until the next read, and the caller copies what it keeps.
			return trimEnd(part), nil
		}
		line = append(line, part...)
		if len(line) > MaxEvent+2 {
			return nil, errLongLine
		}
		switch {
		case err == nil:
			return trimEnd(line), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(line) > 0:
			return trimEnd(line), nil
		default:
			return nil, err
		}
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

// trimEnd is a line without its end, \n or \r\n (or a lone \r).
func trimEnd(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}
