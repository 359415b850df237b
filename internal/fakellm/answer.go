package fakellm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// HugePiece is the size of the first piece's content under the "huge"
// fault, in bytes.
const HugePiece = 8 << 20

// answer is what the fake sends for one request, and when.
type answer struct {
	chat    bool
	id      string
	created int64
	model   string
	prompt  int
	// n is the number of pieces, capped when max_tokens cut it short.
	n      int
	capped bool
	// usage says whether to send usage; nullUsage whether the chunks
	// before it carry "usage":null, as OpenAI's do when usage is asked.
	usage, nullUsage bool
	// fault is how this answer misbehaves.
	fault fault
	times []time.Time
}

// text is the content of piece k.
func (a answer) text(k int) string {
	if k == 0 && a.fault.kind == "huge" {
		return strings.Repeat("x", HugePiece)
	}
	return fmt.Sprintf(" tok%d", k+1)
}

func (a answer) reason() string {
	if a.capped {
		return "length"
	}
	return "stop"
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

func (a answer) counts() *usage { return &usage{a.prompt, a.n, a.prompt + a.n} }

// A streamed chunk and its choices, in OpenAI's fields and order.
type (
	chunk struct {
		ID      string          `json:"id"`
		Object  string          `json:"object"`
		Created int64           `json:"created"`
		Model   string          `json:"model"`
		Choices []any           `json:"choices"`
		Usage   json.RawMessage `json:"usage,omitempty"`
	}
	chatChoice struct {
		Index        int       `json:"index"`
		Delta        delta     `json:"delta"`
		Logprobs     *struct{} `json:"logprobs"`
		FinishReason *string   `json:"finish_reason"`
	}
	delta struct {
		Role    string  `json:"role,omitempty"`
		Content *string `json:"content,omitempty"`
	}
	textChoice struct {
		Index        int       `json:"index"`
		Text         string    `json:"text"`
		Logprobs     *struct{} `json:"logprobs"`
		FinishReason *string   `json:"finish_reason"`
	}
)

// chunk returns a streamed chunk with choice.
func (a answer) chunk(choice any) []byte {
	c := a.emptyChunk()
	c.Choices = append(c.Choices, choice)
	if a.nullUsage {
		c.Usage = json.RawMessage("null")
	}
	return marshal(c)
}

func (a answer) emptyChunk() chunk {
	c := chunk{ID: a.id, Object: "text_completion", Created: a.created, Model: a.model, Choices: []any{}}
	if a.chat {
		c.Object = "chat.completion.chunk"
	}
	return c
}

// piece returns the chunk of piece k; the first of a chat names the role.
func (a answer) piece(k int) []byte {
	text := a.text(k)
	if !a.chat {
		return a.chunk(textChoice{Text: text})
	}
	d := delta{Content: &text}
	if k == 0 {
		d.Role = "assistant"
	}
	return a.chunk(chatChoice{Delta: d})
}

// finish returns the chunk that ends the choice, with its reason.
func (a answer) finish() []byte {
	reason := a.reason()
	if a.chat {
		return a.chunk(chatChoice{FinishReason: &reason})
	}
	return a.chunk(textChoice{FinishReason: &reason})
}

// usageChunk returns the chunk with no choices that carries the usage.
func (a answer) usageChunk() []byte {
	c := a.emptyChunk()
	c.Usage = marshal(a.counts())
	return marshal(c)
}

// whole returns the answer as one object, for a request that does not
// stream.
func (a answer) whole() []byte {
	var text strings.Builder
	for k := range a.n {
		text.WriteString(a.text(k))
	}
	reason := a.reason()
	type message struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	type choice struct {
		Index        int       `json:"index"`
		Message      *message  `json:"message,omitempty"`
		Text         *string   `json:"text,omitempty"`
		Logprobs     *struct{} `json:"logprobs"`
		FinishReason string    `json:"finish_reason"`
	}
	c := choice{FinishReason: reason}
	object, s := "text_completion", text.String()
	if a.chat {
		object, c.Message = "chat.completion", &message{"assistant", s}
	} else {
		c.Text = &s
	}
	var u *usage
	if a.usage {
		u = a.counts()
	}
	return marshal(struct {
		ID      string   `json:"id"`
		Object  string   `json:"object"`
		Created int64    `json:"created"`
		Model   string   `json:"model"`
		Choices []choice `json:"choices"`
		Usage   *usage   `json:"usage,omitempty"`
	}{a.id, object, a.created, a.model, []choice{c}, u})
}

// marshal marshals the fake's own types, which hold nothing that JSON
// cannot, so that it never fails. It leaves <, > and & as they are, as
// OpenAI does.
func marshal(v any) []byte {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	e.Encode(v)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
