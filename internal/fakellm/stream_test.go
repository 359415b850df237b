package fakellm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// The stream is OpenAI's to the byte: the role in the first delta only,
// "usage":null on every chunk when usage is asked, the finish, the usage
// chunk with no choices, then [DONE].
func TestAChatStreamIsOpenAIsEventsToTheByte(t *testing.T) {
	url, s := serve(t, quick(t))
	resp := post(context.Background(), t, client(t), url+"/v1/chat/completions", "",
		`{"model":"m","messages":[{"role":"system","content":"be brief"},{"role":"user","content":[{"type":"text","text":"hello there\nworld"},{"type":"image_url","image_url":{"url":"x"}}]}],
		  "stream":true,"stream_options":{"include_usage":true}}`)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, Content-Type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	evs, err := readEvents(t, resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	head := fmt.Sprintf(`"id":"chatcmpl-1","object":"chat.completion.chunk","created":%d,"model":"m"`, s.Requests()[0].Arrived.Unix())
	piece := func(delta string) string {
		return `{` + head + `,"choices":[{"index":0,"delta":` + delta + `,"logprobs":null,"finish_reason":null}],"usage":null}`
	}
	want := []string{
		piece(`{"role":"assistant","content":" tok1"}`), piece(`{"content":" tok2"}`), piece(`{"content":" tok3"}`), piece(`{"content":" tok4"}`),
		`{` + head + `,"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}`,
		`{` + head + `,"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":4,"total_tokens":9}}`,
		`[DONE]`,
	}
	if len(evs) != len(want) {
		t.Fatalf("%d events, want %d: %v", len(evs), len(want), evs)
	}
	for i := range want {
		if evs[i].data != want[i] {
			t.Errorf("event %d:\n got %s\nwant %s", i, evs[i].data, want[i])
		}
	}
}

func TestATextStreamIsOpenAIsEvents(t *testing.T) {
	url, s := serve(t, quick(t))
	resp := post(context.Background(), t, client(t), url+"/v1/completions", "",
		`{"model":"m","prompt":["one two","three"],"stream":true,"max_tokens":2,"seed":7,"temperature":0}`)
	evs, err := readEvents(t, resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	head := fmt.Sprintf(`"id":"cmpl-1","object":"text_completion","created":%d,"model":"m"`, s.Requests()[0].Arrived.Unix())
	want := []string{
		`{` + head + `,"choices":[{"index":0,"text":" tok1","logprobs":null,"finish_reason":null}]}`,
		`{` + head + `,"choices":[{"index":0,"text":" tok2","logprobs":null,"finish_reason":null}]}`,
		`{` + head + `,"choices":[{"index":0,"text":"","logprobs":null,"finish_reason":"length"}]}`,
		`[DONE]`,
	}
	if len(evs) != len(want) {
		t.Fatalf("%d events, want %d: %v", len(evs), len(want), evs)
	}
	for i := range want {
		if evs[i].data != want[i] {
			t.Errorf("event %d:\n got %s\nwant %s", i, evs[i].data, want[i])
		}
	}
	got := s.Requests()[0]
	if got.PromptTokens != 3 || got.CompletionTokens != 2 || *got.Seed != 7 || *got.Temperature != 0 || *got.MaxTokens != 2 {
		t.Errorf("recorded %+v", got)
	}
}

// Usage comes only when asked, and the chunks before it carry
// "usage":null only then.
func TestUsageIsSentOnlyWhenAsked(t *testing.T) {
	url, _ := serve(t, quick(t))
	c := client(t)
	for _, tt := range []struct {
		name, options string
		want          bool
	}{
		{"no stream_options", ``, false},
		{"include_usage false", `,"stream_options":{"include_usage":false}`, false},
		{"include_usage true", `,"stream_options":{"include_usage":true}`, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp := post(context.Background(), t, c, url+"/v1/chat/completions", "",
				`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true`+tt.options+`}`)
			evs, err := readEvents(t, resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			usages := 0
			for _, e := range evs[:len(evs)-1] {
				m := decode(t, e.data)
				u, has := m["usage"]
				if has != tt.want {
					t.Errorf("%s: usage present %v, want %v", e.data, has, tt.want)
				}
				if u != nil {
					usages++
				}
			}
			if want := map[bool]int{true: 1, false: 0}[tt.want]; usages != want {
				t.Errorf("%d usage chunks, want %d", usages, want)
			}
		})
	}
}

// The number of pieces is Tokens, capped by max_completion_tokens or
// else max_tokens; the finish says whether the cap cut it short.
func TestMaxTokensCapsThePieces(t *testing.T) {
	url, _ := serve(t, quick(t))
	c := client(t)
	for _, tt := range []struct {
		name, fields string
		want         int
		finish       string
	}{
		{"no cap", ``, 4, "stop"},
		{"max_tokens below Tokens", `,"max_tokens":1`, 1, "length"},
		{"max_tokens at Tokens", `,"max_tokens":4`, 4, "stop"},
		{"max_tokens above Tokens", `,"max_tokens":100`, 4, "stop"},
		{"max_completion_tokens over max_tokens", `,"max_tokens":1,"max_completion_tokens":3`, 3, "length"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp := post(context.Background(), t, c, url+"/v1/chat/completions", "",
				`{"model":"m","messages":[{"role":"user","content":"a b c"}],"stream":true,"stream_options":{"include_usage":true}`+tt.fields+`}`)
			evs, err := readEvents(t, resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			pieces := 0
			for _, e := range evs[:len(evs)-1] {
				if _, ok := content(t, decode(t, e.data)); ok {
					pieces++
				}
			}
			finish := decode(t, evs[len(evs)-3].data)["choices"].([]any)[0].(map[string]any)["finish_reason"]
			usage := decode(t, evs[len(evs)-2].data)["usage"].(map[string]any)
			if pieces != tt.want || finish != tt.finish || usage["completion_tokens"] != jsonInt(tt.want) || usage["prompt_tokens"] != jsonInt(3) {
				t.Errorf("%d pieces, finish %v, usage %v; want %d pieces, finish %s", pieces, finish, usage, tt.want, tt.finish)
			}
		})
	}
}

func jsonInt(n int) any { return json.Number(fmt.Sprint(n)) }

// An answer that is not streamed is one object, with usage.
func TestAWholeAnswerIsOneObjectWithUsage(t *testing.T) {
	url, s := serve(t, quick(t))
	c := client(t)
	for i, tt := range []struct{ path, body, want string }{
		{"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"a b"}],"max_tokens":3}`,
			`{"id":"chatcmpl-1","object":"chat.completion","created":%d,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":" tok1 tok2 tok3"},"logprobs":null,"finish_reason":"length"}],"usage":{"prompt_tokens":2,"completion_tokens":3,"total_tokens":5}}`},
		{"/v1/completions", `{"model":"m","prompt":"a b c d","stream":false}`,
			`{"id":"cmpl-2","object":"text_completion","created":%d,"model":"m","choices":[{"index":0,"text":" tok1 tok2 tok3 tok4","logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":4,"completion_tokens":4,"total_tokens":8}}`},
	} {
		resp := post(context.Background(), t, c, url+tt.path, "", tt.body)
		b, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("%s: status %d, %q, %v", tt.path, resp.StatusCode, resp.Header.Get("Content-Type"), err)
		}
		seen := s.Requests()[i]
		if want := fmt.Sprintf(tt.want, seen.Arrived.Unix()); strings.TrimSpace(string(b)) != want {
			t.Errorf("%s:\n got %s\nwant %s", tt.path, b, want)
		}
		if seen.FirstToken.Before(seen.Slot.Add(quick(t).Prefill + quick(t).Decode)) {
			t.Errorf("%s: answered at %v, before the end of its decode", tt.path, seen.FirstToken)
		}
	}
}

func TestModelsListsTheModels(t *testing.T) {
	for _, tt := range []struct {
		models []string
		want   string
	}{
		{nil, `{"object":"list","data":[{"id":"fakellm","object":"model","owned_by":"fakellm"}]}`},
		{[]string{"a", "b"}, `{"object":"list","data":[{"id":"a","object":"model","owned_by":"fakellm"},{"id":"b","object":"model","owned_by":"fakellm"}]}`},
	} {
		c := quick(t)
		c.Models = tt.models
		url, _ := serve(t, c)
		resp, err := client(t).Get(url + "/v1/models")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(b)) != tt.want {
			t.Errorf("models %v: %d %s, want %s", tt.models, resp.StatusCode, b, tt.want)
		}
	}
}
