package serve

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// request is a request to serve as a browser or a program sends it.
type request struct {
	method, path string
	header       map[string]string
}

func (q request) to(host string) *http.Request {
	req := httptest.NewRequest(q.method, "http://"+host+q.path, nil)
	for k, v := range q.header {
		req.Header.Set(k, v)
	}
	if q.path == "/v1/windows" {
		// A stream served here ends at once: its client is gone.
		ctx, cancel := context.WithCancel(req.Context())
		cancel()
		req = req.WithContext(ctx)
	}
	return req
}

// A web page of another origin may send "simple" POSTs to serve without
// its leave, and open a stream by an <img> or fetch in no-cors mode: were
// they served, six at a time would fill the 1024 places in seconds and
// lock every --node client out for a day. They are refused, and a
// program's requests (no Origin, no Sec-Fetch-Site, no body) and a page
// of serve's own origin are served as before.
func TestAWebPageOfAnotherOriginCannotTakeThePlaces(t *testing.T) {
	s, _ := offline(t, newClock(), Config{})
	h := s.Handler()
	id := mustOpen(t, h)
	const host = "127.0.0.1:10241"
	evil := map[string]string{"Origin": "https://evil.example", "Content-Type": "text/plain"}
	for _, tt := range []struct {
		name string
		request
		why string // in the 403's message
	}{
		{"an old browser's form post of text", request{"POST", "/v1/spans", evil}, "another origin"},
		{"a browser's cross-site form post", request{"POST", "/v1/spans", map[string]string{
			"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example", "Content-Type": "application/x-www-form-urlencoded"}}, "another origin"},
		{"a page of another port of this machine", request{"POST", "/v1/spans", map[string]string{
			"Sec-Fetch-Site": "same-site", "Origin": "http://127.0.0.1:8080"}}, "another origin"},
		{"an end from another site", request{"POST", "/v1/spans/" + id + "/end", map[string]string{"Sec-Fetch-Site": "cross-site"}}, "another origin"},
		{"a form's body with no Origin at all", request{"POST", "/v1/spans", map[string]string{"Content-Type": "multipart/form-data; boundary=x"}}, "multipart/form-data"},
		{"text in capitals", request{"POST", "/v1/spans", map[string]string{"Content-Type": "Text/Plain; charset=UTF-8"}}, "text/plain"},
		{"a stream for an <img> of another site", request{"GET", "/v1/windows", map[string]string{"Sec-Fetch-Site": "cross-site"}}, "another site"},
		{"a stream for a page of a sibling site", request{"GET", "/v1/windows", map[string]string{"Sec-Fetch-Site": "same-site"}}, "another site"},
		{"a stream for an old browser's fetch", request{"GET", "/v1/windows", map[string]string{"Origin": "https://evil.example"}}, "another origin"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := s.holding()
			msg := errorBody(t, serveLocal(h, tt.to(host)), http.StatusForbidden)
			if !strings.Contains(msg, tt.why) {
				t.Errorf("error %q does not say %q", msg, tt.why)
			}
			if n := s.holding(); n != before {
				t.Errorf("%d places held after it, %d before", n, before)
			}
		})
	}
	for _, tt := range []struct {
		name string
		request
		want int
	}{
		{"a program's POST", request{"POST", "/v1/spans", nil}, http.StatusCreated},
		{"a page of serve's own origin", request{"POST", "/v1/spans", map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "http://" + host}}, http.StatusCreated},
		{"an old browser on serve's own origin", request{"POST", "/v1/spans", map[string]string{"Origin": "http://" + host}}, http.StatusCreated},
		{"a URL typed by the user", request{"POST", "/v1/spans", map[string]string{"Sec-Fetch-Site": "none"}}, http.StatusCreated},
		{"a body of JSON, which a page must ask leave to send", request{"POST", "/v1/spans", map[string]string{"Content-Type": "application/json"}}, http.StatusCreated},
		{"a program's stream", request{"GET", "/v1/windows", nil}, http.StatusOK},
		{"a stream for serve's own origin", request{"GET", "/v1/windows", map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "http://" + host}}, http.StatusOK},
		{"the status for a page of another site, which it cannot read", request{"GET", "/v1/status", map[string]string{"Sec-Fetch-Site": "cross-site"}}, http.StatusOK},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if rec := serveLocal(h, tt.to(host)); rec.Code != tt.want {
				t.Errorf("%d %s, want %d", rec.Code, rec.Body, tt.want)
			}
		})
	}
	// However many a page sends, a program still opens a span.
	for range MaxOpenSpans + 1 {
		if rec := serveLocal(h, request{"POST", "/v1/spans", evil}.to(host)); rec.Code != http.StatusForbidden {
			t.Fatalf("a page's POST: %d %s, want 403", rec.Code, rec.Body)
		}
	}
	mustOpen(t, h)
}

// A page at evil.example whose name is rebound to 127.0.0.1 reaches
// serve with Host evil.example: without a password, serve answers only a
// Host that names this machine. With one, any name will do: Prometheus
// scrapes by DNS names.
func TestAPageThatRebindsItsNameToThisMachineIsRefused(t *testing.T) {
	s, _ := offline(t, newClock(), Config{Hostnames: []string{"Mac1"}})
	h := s.Handler()
	for _, host := range []string{
		"localhost", "localhost:10241", "LOCALHOST.:10241", "exopower.localhost:10241",
		"127.0.0.1", "127.0.0.1:10241", "127.3.2.1:10241", "[::1]:10241", "[::1]",
		"mac1", "mac1:10241", "Mac1.local:10241",
	} {
		if rec := serveLocal(h, request{"GET", "/v1/status", nil}.to(host)); rec.Code != http.StatusOK {
			t.Errorf("Host %s: %d %s, want 200", host, rec.Code, rec.Body)
		}
	}
	for _, host := range []string{
		"evil.example", "evil.example:10241", "127.0.0.1.evil.example:10241", "localhost.evil.example",
		"0.0.0.0:10241", "192.0.2.2:10241", "mac2.local:10241", "mac1.evil.example",
	} {
		for _, q := range []request{{"GET", "/v1/status", nil}, {"GET", "/metrics", nil}, {"GET", "/v1/windows", nil}, {"POST", "/v1/spans", nil}} {
			msg := errorBody(t, serveLocal(h, q.to(host)), http.StatusForbidden)
			for _, want := range []string{`Host "` + host + `"`, "localhost or 127.0.0.1", "--web.config.file"} {
				if !strings.Contains(msg, want) {
					t.Errorf("Host %s, %s %s: error %q does not say %q", host, q.method, q.path, msg, want)
				}
			}
		}
	}
	// A request with no Host at all (HTTP/1.0) names nothing of this
	// machine's either.
	req := request{"GET", "/v1/status", nil}.to("localhost")
	req.Host = ""
	errorBody(t, serveLocal(h, req), http.StatusForbidden)

	users := Config{WebConfigFile: writeWebConfig(t, usersLine(t, "prom", "s3cret"))}
	s, _ = offline(t, newClock(), users)
	req = request{"GET", "/v1/status", nil}.to("mac1.example.net:10241")
	req.SetBasicAuth("prom", "s3cret")
	if rec := serveFrom(s.Handler(), req, "192.0.2.7:40000"); rec.Code != http.StatusOK {
		t.Errorf("with a password, Host mac1.example.net: %d %s, want 200", rec.Code, rec.Body)
	}
}

// The web config is read again at every request, as exporter-toolkit
// reads it: a password set, changed or taken away counts at once. A file
// that cannot be read, is empty (as an editor leaves it mid-save), cannot
// be parsed, or sets no passwords while serve listens beyond this
// machine fails closed: other machines get 503 naming the file and what
// is wrong; this machine is served on, as without passwords.
func TestTheWebConfigInForceIsTheFileAsItIsNow(t *testing.T) {
	path := writeWebConfig(t, usersLine(t, "prom", "s3cret"))
	s, _ := offline(t, newClock(), Config{WebConfigFile: path, BeyondLoopback: true})
	h := s.Handler()
	ask := func(remote, password string) *httptest.ResponseRecorder {
		req := request{"GET", "/v1/status", nil}.to("127.0.0.1:10241")
		if password != "" {
			req.SetBasicAuth("prom", password)
		}
		return serveFrom(h, req, remote)
	}
	const other, this = "192.0.2.7:40000", "127.0.0.1:40000"
	write := func(lines ...string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if rec := ask(other, "s3cret"); rec.Code != http.StatusOK {
		t.Fatalf("with the password: %d %s", rec.Code, rec.Body)
	}
	errorBody(t, ask(other, ""), http.StatusUnauthorized)
	errorBody(t, ask(this, ""), http.StatusUnauthorized)

	for _, tt := range []struct {
		name    string
		write   func()
		problem string
	}{
		{"users taken away", func() { write("basic_auth_users: {}") }, "sets no basic_auth_users"},
		{"the file emptied", func() { write() }, "is empty"},
		{"the file half written", func() { write("basic_auth_users:\n  prom: [") }, "cannot be used: "},
		{"a key misspelt", func() { write("basic_auth_user: {}") }, "cannot be used: "},
		{"the file gone", func() { os.Remove(path) }, "cannot be read: no such file or directory"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.write()
			msg := errorBody(t, ask(other, "s3cret"), http.StatusServiceUnavailable)
			for _, want := range []string{path, tt.problem} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not say %q", msg, want)
				}
			}
			if rec := ask(this, ""); rec.Code != http.StatusOK {
				t.Errorf("from this machine: %d %s, want 200", rec.Code, rec.Body)
			}
		})
	}

	write(usersLine(t, "prom", "n3w"))
	errorBody(t, ask(other, "s3cret"), http.StatusUnauthorized)
	errorBody(t, ask(this, ""), http.StatusUnauthorized)
	if rec := ask(other, "n3w"); rec.Code != http.StatusOK {
		t.Errorf("with the new password: %d %s", rec.Code, rec.Body)
	}
}
