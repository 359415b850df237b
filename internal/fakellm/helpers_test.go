package fakellm

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/fakepm"
)

// idle is the fake Mac's power outside served slots: the profile that the
// fake powermetrics would run with.
var idle = fakepm.Watts{2, 0.5, 0.1}

// quick is a fast schedule: slots of 150 ms, 30 ms of prefill and 4
// pieces over 60 ms of decode.
func quick(t *testing.T) Config {
	return Config{
		Period: 150 * time.Millisecond, Prefill: 30 * time.Millisecond, Decode: 60 * time.Millisecond, Tokens: 4,
		PrefillWatts: fakepm.Watts{12, 1, 0.1}, DecodeWatts: fakepm.Watts{6, 9, 0.1},
		Overrides: filepath.Join(t.TempDir(), "overrides"),
	}
}

// serve starts a fake with c, stopped when the test ends.
func serve(t *testing.T, c Config) (string, *Server) {
	t.Helper()
	s := NewHandler(c)
	url, stop, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return url, s
}

// client is an HTTP client of its own, whose connections are closed when
// the test ends, and which follows no redirect.
func client(t *testing.T) *http.Client {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// post sends body to url with ctx, and the bearer token key if not "".
func post(ctx context.Context, t *testing.T, c *http.Client, url, key, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// sse is a server-sent event's data and when the client had read it.
type sse struct {
	data string
	at   time.Time
}

// readEvents reads a stream line by line, as a client does, holding it to
// the shape of OpenAI's: each event a "data: " line and an empty one. It
// returns the events and the error the body ended with (nil at a clean
// end).
func readEvents(t *testing.T, body io.Reader) ([]sse, error) {
	t.Helper()
	sc := bufio.NewScanner(body)
	sc.Buffer(nil, 16<<20)
	var evs []sse
	for sc.Scan() {
		line := sc.Text()
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("after %d events, a line %.80q that is no data: line", len(evs), line)
		}
		evs = append(evs, sse{data, time.Now()})
		if !sc.Scan() {
			break
		}
		if sc.Text() != "" {
			t.Fatalf("event %d: followed by %.80q, not an empty line", len(evs), sc.Text())
		}
	}
	return evs, sc.Err()
}

// decode decodes an event's JSON, failing the test if it is none.
func decode(t *testing.T, data string) map[string]any {
	t.Helper()
	var m map[string]any
	d := json.NewDecoder(strings.NewReader(data))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		t.Fatalf("%.200q: %v", data, err)
	}
	return m
}

// content returns a chat chunk's delta content, or a text chunk's text.
func content(t *testing.T, m map[string]any) (string, bool) {
	t.Helper()
	choices, _ := m["choices"].([]any)
	if len(choices) != 1 {
		return "", false
	}
	c := choices[0].(map[string]any)
	if d, ok := c["delta"].(map[string]any); ok {
		s, ok := d["content"].(string)
		return s, ok
	}
	s, ok := c["text"].(string)
	return s, ok && s != ""
}

// isUnexpectedEnd says err is a body that ended before its end.
func isUnexpectedEnd(err error) bool {
	return errors.Is(err, io.ErrUnexpectedEOF) || err != nil && strings.Contains(err.Error(), "unexpected EOF")
}
