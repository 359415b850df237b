package fakellm

import (
	"encoding/json"
	"fmt"
	"strings"
)

// request is the body of a completion request, chat or text: the fields
// the fake heeds or records, the others ignored as servers do.
type request struct {
	Model               string          `json:"model"`
	Messages            []message       `json:"messages"`
	Prompt              json.RawMessage `json:"prompt"`
	Stream              bool            `json:"stream"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	Temperature         *float64        `json:"temperature"`
	Seed                *int64          `json:"seed"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

type message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// badRequest is a request the fake refuses with 400, and the message
// OpenAI gives for it.
type badRequest struct{ msg string }

func (e badRequest) Error() string { return e.msg }

// parseRequest reads a completion request's body; chat says which of the
// two endpoints it came to. It also counts the prompt's tokens: its
// whitespace-separated words.
func parseRequest(body []byte, chat bool) (request, int, error) {
	var r request
	if err := json.Unmarshal(body, &r); err != nil {
		return r, 0, badRequest{"We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)"}
	}
	if r.Model == "" {
		return r, 0, badRequest{"you must provide a model parameter"}
	}
	for _, m := range []struct {
		name string
		v    *int
	}{{"max_tokens", r.MaxTokens}, {"max_completion_tokens", r.MaxCompletionTokens}} {
		if m.v != nil && *m.v < 1 {
			return r, 0, badRequest{fmt.Sprintf("Invalid '%s': integer below minimum value. Expected a value >= 1, but got %d instead.", m.name, *m.v)}
		}
	}
	words, err := r.promptWords(chat)
	return r, words, err
}

// promptWords counts the words of the messages' text, or of the prompt.
func (r request) promptWords(chat bool) (int, error) {
	if !chat {
		if len(r.Prompt) == 0 {
			return 0, badRequest{"Missing required parameter: 'prompt'."}
		}
		return words(r.Prompt, "prompt")
	}
	if r.Messages == nil {
		return 0, badRequest{"Missing required parameter: 'messages'."}
	}
	n := 0
	for i, m := range r.Messages {
		w, err := words(m.Content, fmt.Sprintf("messages[%d].content", i))
		if err != nil {
			return 0, err
		}
		n += w
	}
	return n, nil
}

// words counts the words of a message's content or a prompt: a string, an
// array of strings, or an array of content parts, whose text parts count.
// Absent or null counts none.
func words(raw json.RawMessage, name string) (int, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return len(strings.Fields(s)), nil
	}
	var parts []json.RawMessage
	if json.Unmarshal(raw, &parts) != nil {
		return 0, badRequest{fmt.Sprintf("Invalid type for '%s': expected a string or an array.", name)}
	}
	n := 0
	for _, p := range parts {
		var part struct {
			Type string  `json:"type"`
			Text *string `json:"text"`
		}
		switch {
		case json.Unmarshal(p, &s) == nil:
			n += len(strings.Fields(s))
		case json.Unmarshal(p, &part) == nil && part.Type == "text" && part.Text != nil:
			n += len(strings.Fields(*part.Text))
		case part.Type != "" && part.Type != "text":
			// An image or another part holds no words.
		default:
			return 0, badRequest{fmt.Sprintf("Invalid content part in '%s'.", name)}
		}
	}
	return n, nil
}

// limit is the number of tokens to send: Tokens, capped by the request's
// max_completion_tokens, or else its max_tokens. capped says the cap cut
// the answer short.
func (r request) limit(tokens int) (n int, capped bool) {
	most := r.MaxCompletionTokens
	if most == nil {
		most = r.MaxTokens
	}
	if most != nil && *most < tokens {
		return *most, true
	}
	return tokens, false
}

func (r request) includeUsage() bool {
	return r.StreamOptions != nil && r.StreamOptions.IncludeUsage
}
