package fakellm

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// Errors are OpenAI's: its statuses and {"error":{...}} bodies.
func TestErrorsAreOpenAIs(t *testing.T) {
	c := quick(t)
	c.Models, c.APIKey = []string{"known"}, "sk-right"
	url, s := serve(t, c)
	cl := client(t)
	chat := `{"model":"known","messages":[{"role":"user","content":"hi"}]}`
	for _, tt := range []struct {
		name, method, path, key, body string
		status                        int
		want                          string
	}{
		{"no API key", "POST", "/v1/chat/completions", "", chat, 401,
			`{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`},
		{"a wrong API key", "GET", "/v1/models", "sk-wrong", "", 401,
			`{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`},
		{"an unknown model", "POST", "/v1/chat/completions", "sk-right", `{"model":"other","messages":[]}`, 404,
			"{\"error\":{\"message\":\"The model `other` does not exist.\",\"type\":\"invalid_request_error\",\"param\":null,\"code\":\"model_not_found\"}}"},
		{"a body that is no JSON", "POST", "/v1/completions", "sk-right", `{"model":`, 400,
			`{"error":{"message":"We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)","type":"invalid_request_error","param":null,"code":null}}`},
		{"no model", "POST", "/v1/chat/completions", "sk-right", `{"messages":[]}`, 400,
			`{"error":{"message":"you must provide a model parameter","type":"invalid_request_error","param":null,"code":null}}`},
		{"no messages", "POST", "/v1/chat/completions", "sk-right", `{"model":"known"}`, 400,
			`{"error":{"message":"Missing required parameter: 'messages'.","type":"invalid_request_error","param":null,"code":null}}`},
		{"max_tokens 0", "POST", "/v1/completions", "sk-right", `{"model":"known","prompt":"x","max_tokens":0}`, 400,
			`{"error":{"message":"Invalid 'max_tokens': integer below minimum value. Expected a value >= 1, but got 0 instead.","type":"invalid_request_error","param":null,"code":null}}`},
		{"a prompt of numbers", "POST", "/v1/completions", "sk-right", `{"model":"known","prompt":5}`, 400,
			`{"error":{"message":"Invalid type for 'prompt': expected a string or an array.","type":"invalid_request_error","param":null,"code":null}}`},
		{"an unknown path", "POST", "/v1/embeddings", "sk-right", `{}`, 404,
			`{"error":{"message":"Invalid URL (POST /v1/embeddings)","type":"invalid_request_error","param":null,"code":null}}`},
		{"a GET of completions", "GET", "/v1/chat/completions", "sk-right", ``, 405,
			`{"error":{"message":"Invalid method for URL (GET /v1/chat/completions)","type":"invalid_request_error","param":null,"code":null}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, url+tt.path, strings.NewReader(tt.body))
			if tt.key != "" {
				req.Header.Set("Authorization", "Bearer "+tt.key)
			}
			resp, err := cl.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status || strings.TrimSpace(string(b)) != tt.want || resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("%d %s %s\nwant %d %s", resp.StatusCode, resp.Header.Get("Content-Type"), b, tt.status, tt.want)
			}
		})
	}
	seen := s.Requests()
	if seen[0].Authorization != "" || seen[1].Authorization != "Bearer sk-wrong" || seen[2].Model != "other" || seen[2].Status != 404 {
		t.Errorf("recorded %+v", seen[:3])
	}
	for _, x := range seen {
		if !x.Slot.IsZero() {
			t.Errorf("%s, answered %d, took a slot", x.Path, x.Status)
		}
	}
}

func TestValidateRefusesASchedulesNonsense(t *testing.T) {
	for _, tt := range []struct {
		name string
		edit func(*Config)
	}{
		{"no period", func(c *Config) { c.Period = 0 }},
		{"phases longer than the period", func(c *Config) { c.Decode = c.Period }},
		{"a negative prefill", func(c *Config) { c.Prefill = -time.Millisecond }},
		{"no tokens", func(c *Config) { c.Tokens = 0 }},
		{"negative watts", func(c *Config) { c.DecodeWatts[1] = -1 }},
		{"an unknown fault", func(c *Config) { c.Fault = "explode" }},
		{"a fault with no number", func(c *Config) { c.Fault = "stall-after=x" }},
		{"a status that is none", func(c *Config) { c.Fault = "status=42" }},
		{"a fault that takes no argument", func(c *Config) { c.Fault = "huge=1" }},
	} {
		c := quick(t)
		tt.edit(&c)
		err := c.Validate()
		if err == nil {
			t.Errorf("%s: taken", tt.name)
			continue
		}
		t.Logf("%s: %v", tt.name, err)
		if _, _, err := Start(c); err == nil {
			t.Errorf("%s: Start took it", tt.name)
		}
		rec := httptest.NewRecorder()
		NewHandler(c).ServeHTTP(rec, httptest.NewRequest("GET", "/v1/models", nil))
		if rec.Code != 500 || decode(t, rec.Body.String())["error"].(map[string]any)["message"] != err.Error() {
			t.Errorf("%s: a request answered %d %s, want 500 and why", tt.name, rec.Code, rec.Body)
		}
	}
}

func TestStartServesOnLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:0", "example.com:0", "127.0.0.1"} {
		if _, stop, err := NewHandler(quick(t)).Start(addr); err == nil {
			stop()
			t.Errorf("Start(%q) took it", addr)
		}
	}
	url, stop, err := NewHandler(quick(t)).Start("[::1]:0")
	if err != nil {
		t.Logf("no IPv6 loopback here: %v", err)
		return
	}
	defer stop()
	if !strings.HasPrefix(url, "http://[::1]:") {
		t.Errorf("URL %s", url)
	}
}

// A request's handler ends when its client goes away, even mid-stall.
func TestAHandlerEndsWhenItsClientGoesAway(t *testing.T) {
	c := quick(t)
	c.Fault = "stall-after=1"
	s := NewHandler(c)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := httptest.NewRequestWithContext(ctx, "POST", "/v1/chat/completions", strings.NewReader(`{"model":"m","messages":[],"stream":true}`))
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.ServeHTTP(httptest.NewRecorder(), req)
	}()
	// Wait for the first piece, with a deadline.
	firstSent := func() bool { r := s.Requests(); return len(r) == 1 && !r[0].FirstToken.IsZero() }
	for deadline := time.Now().Add(10 * time.Second); !firstSent(); {
		if time.Now().After(deadline) {
			t.Fatal("no first piece in 10 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the handler still runs 10 s after its client went away")
	}
}
