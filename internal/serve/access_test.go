package serve

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
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
		{"a span read from another site", request{"GET", "/v1/spans/" + id, map[string]string{"Sec-Fetch-Site": "cross-site"}}, "another site"},
		{"a span read by an old browser's fetch", request{"GET", "/v1/spans/" + id, map[string]string{"Origin": "https://evil.example"}}, "another origin"},
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
		{"a span read by a page of serve's own origin", request{"GET", "/v1/spans/" + id, map[string]string{"Sec-Fetch-Site": "same-origin"}}, http.StatusOK},
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

	users := Config{Web: loadWebConfig(t, writeWebConfig(t, usersLine(t, "prom", "s3cret")))}
	s, _ = offline(t, newClock(), users)
	req = request{"GET", "/v1/status", nil}.to("mac1.example.net:10241")
	req.SetBasicAuth("prom", "s3cret")
	if rec := serveFrom(s.Handler(), req, "192.0.2.7:40000"); rec.Code != http.StatusOK {
		t.Errorf("with a password, Host mac1.example.net: %d %s, want 200", rec.Code, rec.Body)
	}
}

// A 401 asks for the password (WWW-Authenticate: Basic) except from a
// web page that names serve by a name not of this machine's: a page whose
// name its DNS rebinds to 127.0.0.1 would have the browser ask its user
// for serve's password under the page's own name. Programs, and a URL
// the user typed (Sec-Fetch-Site: none), by any name, are asked.
func TestAPageOfAnotherNameIsNotAskedForThePassword(t *testing.T) {
	s, _ := offline(t, newClock(), Config{Web: loadWebConfig(t, writeWebConfig(t, usersLine(t, "prom", "s3cret"))), Hostnames: []string{"mac1"}})
	h := s.Handler()
	for _, tt := range []struct {
		name, host, site string
		asked            bool
	}{
		{"a rebound page, of its own origin", "evil.example:10241", "same-origin", false},
		{"a rebound page's image, from a sibling site", "evil.example:10241", "same-site", false},
		{"a page of another site", "evil.example:10241", "cross-site", false},
		{"a program, by a name of DNS", "mac1.example.net:10241", "", true},
		{"a URL the user typed", "mac1.example.net:10241", "none", true},
		{"a page of serve's own origin", "127.0.0.1:10241", "same-origin", true},
		{"a page of another site, to a name of this machine", "mac1:10241", "cross-site", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			q := request{"GET", "/metrics", nil}
			if tt.site != "" {
				q.header = map[string]string{"Sec-Fetch-Site": tt.site}
			}
			rec := serveLocal(h, q.to(tt.host))
			errorBody(t, rec, http.StatusUnauthorized)
			if got := rec.Header().Get("WWW-Authenticate"); (got == "Basic") != tt.asked {
				t.Errorf("WWW-Authenticate %q; asked for the password: %v, want %v", got, got != "", tt.asked)
			}
		})
	}
}

// The web config is read again at every request, as exporter-toolkit
// reads it: a password set or changed counts at once. Once a config with
// users has been in force, its users stay in force while the file cannot
// be read, is empty (as `cat new > web.yml` leaves it for a moment),
// cannot be parsed or checked, or sets no users (a save cut short may
// leave the users out): every client needs one of their passwords, this
// machine's too, and serve's log says what is wrong with the file. Before,
// this machine was served without a password meanwhile: a poller on it
// got in 12 times while the same good file was rewritten 200 times.
func TestTheWebConfigInForceIsTheFileAsItIsNow(t *testing.T) {
	path := writeWebConfig(t, usersLine(t, "prom", "s3cret"))
	var log lockedBuffer
	s, _ := offline(t, newClock(), Config{Web: loadWebConfig(t, path), BeyondLoopback: true, Log: &log})
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
		os.Remove(path)
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if rec := ask(other, "s3cret"); rec.Code != http.StatusOK {
		t.Fatalf("with the password: %d %s", rec.Code, rec.Body)
	}
	errorBody(t, ask(other, ""), http.StatusUnauthorized)
	errorBody(t, ask(this, ""), http.StatusUnauthorized)

	n3w := userLine(t, "prom", "n3w", bcrypt.MinCost) // another password: the last users' must stay in force
	for _, tt := range []struct {
		name  string
		write func()
		fault string
	}{
		{"users taken away", func() { write("basic_auth_users: {}") }, "sets no basic_auth_users, though a version with users was in force"},
		{"the file emptied", func() { write() }, "is empty"},
		{"the file half written", func() { write("basic_auth_users:\n  prom: [") }, "cannot be used: "},
		{"a key misspelt", func() { write("basic_auth_user: {}") }, "cannot be used: "},
		{"a password that is no bcrypt hash", func() { write("basic_auth_users: {prom: s3cret}") }, "cannot be used: crypto/bcrypt: "},
		{"a bcrypt cost no login can afford", func() { write("basic_auth_users:", n3w, "  alice: '"+costlyHash(31)+"'") },
			"cannot be used: user alice's bcrypt cost 31 is above 14, the most serve accepts"},
		{"a hash with a character no bcrypt hash has", func() { write("basic_auth_users:", n3w, "  alice: '"+misshapen(t)[0].hash+"'") },
			"cannot be used: user alice's password hash is no bcrypt hash"},
		{"the file gone", func() { os.Remove(path) }, "cannot be read: no such file or directory"},
		{"a dangling link", func() { os.Remove(path); os.Symlink(path+".gone", path) }, "cannot be read: no such file or directory"},
		{"a directory", func() { os.Remove(path); os.Mkdir(path, 0o700) }, "is a directory, not a file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.write()
			defer os.RemoveAll(path)
			if rec := ask(other, "s3cret"); rec.Code != http.StatusOK {
				t.Errorf("with the password of the last users: %d %s, want 200", rec.Code, rec.Body)
			}
			errorBody(t, ask(other, ""), http.StatusUnauthorized)
			msg := errorBody(t, ask(this, ""), http.StatusUnauthorized)
			for _, want := range []string{path, tt.fault, "its last users stay in force"} {
				if !strings.Contains(msg, want) {
					t.Errorf("to this machine, error %q does not say %q", msg, want)
				}
				if !strings.Contains(log.String(), want) {
					t.Errorf("serve's log does not say %q:\n%s", want, log.String())
				}
			}
		})
	}

	write(usersLine(t, "prom", "n3w"))
	errorBody(t, ask(other, "s3cret"), http.StatusUnauthorized)
	errorBody(t, ask(this, ""), http.StatusUnauthorized)
	if rec := ask(other, "n3w"); rec.Code != http.StatusOK {
		t.Errorf("with the new password: %d %s", rec.Code, rec.Body)
	}
	if want := "exopower serve: the web config " + path + " is in force again\n"; !strings.HasSuffix(log.String(), want) {
		t.Errorf("serve's log does not end with %q:\n%s", want, log.String())
	}
	// A fault is said once, not at every request.
	if n := strings.Count(log.String(), "is empty"); n != 1 {
		t.Errorf("the empty file said %d times in serve's log, want once:\n%s", n, log.String())
	}
}

// A serve that has never had passwords serves this machine without one
// while its web config cannot be used, and other machines get 503. The
// 503 names only the file: what is wrong may quote it (a password put
// where a hash should be), and goes to serve's log instead.
func TestAServeThatNeverHadPasswordsAnswersOnlyThisMachineWhileItsFileCannotBeUsed(t *testing.T) {
	path := writeWebConfig(t, "basic_auth_users: {}")
	var log lockedBuffer
	s, _ := offline(t, newClock(), Config{Web: loadWebConfig(t, path), BeyondLoopback: true, Log: &log})
	h := s.Handler()
	for _, tt := range []struct{ name, file, fault string }{
		{"no users, serve listening beyond loopback", "basic_auth_users: {}", "sets no basic_auth_users, and serve listens beyond this machine"},
		{"a password where its hash should be", "basic_auth_users:\n  prom: hunter2pw", "crypto/bcrypt: "},
		{"a password in a key misspelt", "rate_limit:\n  burst: hunter2pw", "hunter2pw"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.WriteFile(path, []byte(tt.file), 0o600); err != nil {
				t.Fatal(err)
			}
			msg := errorBody(t, serveFrom(h, request{"GET", "/metrics", nil}.to("127.0.0.1:10241"), "192.0.2.7:40000"), http.StatusServiceUnavailable)
			if !strings.Contains(msg, path) || !strings.Contains(msg, "serve's log says why") {
				t.Errorf("error %q does not name the file and where to read what is wrong", msg)
			}
			if strings.Contains(msg, "hunter2pw") || strings.Contains(msg, "basic_auth_users") || strings.Contains(msg, "burst") {
				t.Errorf("error %q quotes the file to another machine", msg)
			}
			if !strings.Contains(log.String(), tt.fault) {
				t.Errorf("serve's log does not say %q:\n%s", tt.fault, log.String())
			}
			if rec := serveLocal(h, request{"GET", "/metrics", nil}.to("127.0.0.1:10241")); rec.Code != http.StatusOK {
				t.Errorf("from this machine: %d %s, want 200", rec.Code, rec.Body)
			}
		})
	}
}

// A FIFO, or a link to /dev/zero, at the web config's path is refused at
// once: serve hung for good in its open (or read), and SIGTERM did not
// end it. So is a file over MaxWebConfigBytes.
func TestAWebConfigThatIsNoFileIsRefusedWithoutWaiting(t *testing.T) {
	path := writeWebConfig(t, usersLine(t, "prom", "s3cret"))
	s, _ := offline(t, newClock(), Config{Web: loadWebConfig(t, path)})
	h := s.Handler()
	for _, tt := range []struct {
		name  string
		make  func() error
		fault string
	}{
		{"a FIFO", func() error { return syscall.Mkfifo(path, 0o600) }, "is a FIFO, not a file"},
		{"a link to /dev/zero", func() error { return os.Symlink("/dev/zero", path) }, "is a device, not a file"},
		{"a file of more than 1 MiB", func() error {
			return os.WriteFile(path, []byte(usersLine(t, "prom", "s3cret")+"\n"+strings.Repeat("#\n", MaxWebConfigBytes)), 0o600)
		}, "is larger than 1048576 bytes"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(path)
			if err := tt.make(); err != nil {
				t.Fatal(err)
			}
			done := make(chan *httptest.ResponseRecorder, 1)
			go func() { done <- serveLocal(h, request{"GET", "/metrics", nil}.to("127.0.0.1:10241")) }()
			select {
			case rec := <-done:
				if msg := errorBody(t, rec, http.StatusUnauthorized); !strings.Contains(msg, tt.fault) {
					t.Errorf("error %q does not say %q", msg, tt.fault)
				}
			case <-time.After(time.Minute): // a guard against a hang, not a limit on speed
				t.Fatal("a minute on, the request still waits on the web config")
			}
			if _, err := LoadWebConfig(path); err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(strings.TrimPrefix(tt.fault, "is "), "cannot be read: ")) {
				t.Errorf("serve's start: %v, want an error saying %q", err, tt.fault)
			}
		})
	}
}

// lockedBuffer is serve's log in a test.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
