package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// What is checked before anything is measured: that the server answers
// (over TLS where the URL says https, with a certificate this Mac
// trusts), that it takes the key, what models it lists, and that it
// serves each model asked for, with a request of one token.

// ErrNoAnswer is a request that got no answer at all: no connection, a
// TLS handshake that failed, or an answer that is not HTTP.
var ErrNoAnswer = errors.New("no answer")

// MaxModelList bounds the list of models read: ten thousand models are
// some 330 KB of it.
const MaxModelList = 16 << 20

// shownModels is how many of a list's models a message names.
const shownModels = 5

// Listed is what a server's list of models says: how many it lists, and
// the first few as it named them (not yet safe to print: Client.Listed
// says them).
type Listed struct {
	Count int
	First []string
}

// Listed says l in a line: the count, then the first few names.
func (c *Client) Listed(l Listed) string {
	var names []string
	for _, id := range l.First {
		names = append(names, c.text(id))
	}
	s := fmt.Sprintf("%d models", l.Count)
	if l.Count == 1 {
		s = "1 model"
	}
	if len(names) > 0 {
		s += ": " + strings.Join(names, ", ")
	}
	if more := l.Count - len(names); more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s
}

// Models asks the server which models it serves (GET /v1/models, beside
// the endpoint). It is also the check that the server answers before
// anything is measured: an error names the endpoint and why, and is
// ErrNoAnswer where no answer came, a StatusError where it was not 200.
func (c *Client) Models(ctx context.Context) (Listed, error) {
	u := *c.URL
	u.Path = strings.TrimSuffix(strings.TrimSuffix(strings.TrimRight(u.Path, "/"), "/chat/completions"), "/completions") + "/models"
	where := "GET " + Where(&u)
	ctx, cancel := context.WithTimeout(ctx, min(c.Stall, 30*time.Second))
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return Listed{}, c.scrub(err)
	}
	if c.Key != "" {
		req.Header.Set("Authorization", "Bearer "+c.Key)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		err = c.failed(ctx, http.MethodGet, &u, err)
		return Listed{}, &scrubbed{msg: c.text(err.Error()), cause: ErrNoAnswer}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrBody))
		return Listed{}, c.scrub(fmt.Errorf("%s: %w", where, &StatusError{Code: resp.StatusCode, Message: c.text(errorMessage(b))}))
	}
	l, err := readModels(resp.Body, MaxModelList)
	if err != nil {
		return l, c.scrub(fmt.Errorf("%s: not a list of models: %w", where, err))
	}
	return l, nil
}

// readModels reads a list of models as it comes, keeping its count and
// its first names: a list of any length takes no more memory than a
// model's entry. It reads at most limit bytes.
func readModels(r io.Reader, limit int64) (Listed, error) {
	n := &counted{r: io.LimitReader(r, limit+1)}
	var l Listed
	err := decodeModels(json.NewDecoder(n), &l)
	if n.n > limit {
		return l, fmt.Errorf("a list over %s, the most exopower reads", size(limit))
	}
	return l, err
}

// size is n bytes in KiB or MiB.
func size(n int64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d KiB", n>>10)
}

func decodeModels(dec *json.Decoder, l *Listed) error {
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fmt.Errorf("want a JSON object (%v)", err)
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return err
		}
		if key != "data" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return err
			}
			continue
		}
		if t, err := dec.Token(); err != nil || t != json.Delim('[') {
			return fmt.Errorf(`"data" is not a list (%v)`, err)
		}
		for dec.More() {
			var m struct {
				ID string `json:"id"`
			}
			if err := dec.Decode(&m); err != nil {
				return err
			}
			if l.Count++; len(l.First) < shownModels {
				l.First = append(l.First, m.ID)
			}
		}
		if _, err := dec.Token(); err != nil {
			return err
		}
	}
	_, err := dec.Token()
	return err
}

// counted counts the bytes read through it.
type counted struct {
	r io.Reader
	n int64
}

func (c *counted) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// Check sends model a request for one token, not measured, and returns
// why it failed, if it did: a route the server does not serve, a model
// it does not know, a key it refuses for that model.
func (c *Client) Check(ctx context.Context, model string) error {
	opts := c.Options
	opts.MaxTokens = 1
	return c.scrub(c.do(ctx, model, Prompt{Text: "Hi"}, unmeasured{}, opts).Err)
}

// unmeasured are the edges of a request that is not measured.
type unmeasured struct{}

func (unmeasured) Sending(context.Context) {}
func (unmeasured) Token()                  {}
func (unmeasured) Ended()                  {}

// keyForm says what in key no HTTP header can carry, or "": the key goes
// in one, and a transport would refuse it at the first request, after
// the baseline.
func keyForm(key string) string {
	for i := 0; i < len(key); i++ {
		if b := key[i]; b < 0x21 || b > 0x7e {
			return fmt.Sprintf("byte %d of the key is %#02x, which no HTTP header may carry (a space, a control character or a letter outside ASCII)", i+1, b)
		}
	}
	return ""
}
