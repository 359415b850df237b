package serve

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/exopower/exopower/internal/fakepm"
	"github.com/exopower/exopower/internal/power"
	"github.com/exopower/exopower/internal/powermetrics"
	"github.com/exopower/exopower/internal/sampler"
)

// The test binary doubles as the fake powermetrics: run with
// EXOPOWER_TEST_FAKEPM=1, it is the fake and nothing else.
func TestMain(m *testing.M) {
	if os.Getenv("EXOPOWER_TEST_FAKEPM") == "1" {
		os.Exit(fakepm.Main(os.Args[1:], os.Stdout, os.Stderr, os.Getenv))
	}
	os.Exit(m.Run())
}

// clock is a clock the test moves by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// feed is a Source that gives only the samples a test sends it, and takes
// no requests: Begin and End never wait on it.
type feed struct {
	ch   chan power.Sample
	stop chan struct{}
	once sync.Once
}

func newFeed() *feed {
	return &feed{ch: make(chan power.Sample), stop: make(chan struct{})}
}

func (f *feed) Next() (power.Sample, error) {
	select {
	case s := <-f.ch:
		return s, nil
	case <-f.stop:
		return power.Sample{}, io.EOF
	}
}
func (f *feed) CanRequestSample() bool { return false }
func (f *feed) RequestSample() error   { return nil }
func (f *feed) Stop() error            { f.once.Do(func() { close(f.stop) }); return nil }

// noRestarts is a source that was never started again.
type noRestarts struct{}

func (noRestarts) Restarts() (int, error) { return 0, nil }

// offline is a Server over a Sampler fed by hand, on the clock c.
func offline(t testing.TB, c *clock, cfg Config) (*Server, *feed) {
	t.Helper()
	f := newFeed()
	m := sampler.Start(f, sampler.Config{Source: "powermetrics", Interval: 100 * time.Millisecond, Now: c.Now})
	t.Cleanup(func() { m.Stop() })
	cfg.Now = c.Now
	if cfg.Node == "" {
		cfg.Node = "test-node"
	}
	cfg.Interval = 100 * time.Millisecond
	cfg.Reasons = powermetrics.Reasons()
	return New(m, noRestarts{}, cfg), f
}

// live is a Server over the fake powermetrics, run as a subprocess with
// the profile and interval given and supervised as exopower serve does.
type live struct {
	srv     *Server
	meter   *sampler.Sampler
	sup     *powermetrics.Supervisor
	ts      *httptest.Server
	pidfile string
	profile fakepm.Profile
}

func startLive(t *testing.T, profile string, interval time.Duration, env ...string) *live {
	t.Helper()
	l := launchFake(t, profile, interval, env...)
	return l.serve(t, l.sup, interval)
}

// launchFake starts the fake powermetrics, supervised, and serves nothing
// yet: l.serve does.
func launchFake(t *testing.T, profile string, interval time.Duration, env ...string) *live {
	t.Helper()
	prof, err := fakepm.ParseProfile(profile)
	if err != nil {
		t.Fatal(err)
	}
	pidfile := filepath.Join(t.TempDir(), "powermetrics.pid")
	t.Setenv("EXOPOWER_TEST_FAKEPM", "1")
	t.Setenv("FAKEPM_PIDFILE", pidfile)
	t.Setenv("FAKEPM_PROFILE", profile)
	for i := 0; i+1 < len(env); i += 2 {
		t.Setenv(env[i], env[i+1])
	}
	opts := powermetrics.LaunchOptions{Options: powermetrics.Options{Path: cmp.Or(fakepm.Plain(), os.Args[0]), Interval: interval}}
	p, err := powermetrics.Launch(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	l := &live{sup: powermetrics.Supervise(p, opts), pidfile: pidfile, profile: prof}
	t.Cleanup(func() { l.sup.Stop() })
	return l
}

// serve starts the Sampler over src (the Supervisor, or something around
// it) and the Server and its HTTP server over that.
func (l *live) serve(t *testing.T, src sampler.Source, interval time.Duration) *live {
	l.meter = sampler.Start(src, sampler.Config{Source: "powermetrics", Interval: interval, Grace: time.Second})
	l.srv = New(l.meter, l.sup, Config{Node: "test-node", Interval: interval, Reasons: powermetrics.Reasons()})
	l.ts = httptest.NewServer(l.srv.Handler())
	t.Cleanup(func() {
		l.ts.Close()
		l.meter.Stop()
	})
	return l
}

// call makes a request and decodes its JSON answer into v (unless v is
// nil); it returns the status.
func call(t *testing.T, method, url string, v any) int {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if v != nil {
		if err := json.Unmarshal(body, v); err != nil {
			t.Fatalf("%s %s: %v in %q", method, url, err, body)
		}
	}
	return resp.StatusCode
}

// holding is how many spans and streams hold a place among MaxOpenSpans.
func (s *Server) holding() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.spans) + s.pending + s.streams
}

// serveLocal serves req through h as if it came from this machine, to
// 127.0.0.1:10241, and returns the recorded answer.
func serveLocal(h http.Handler, req *http.Request) *httptest.ResponseRecorder {
	return serveFrom(h, req, "127.0.0.1:50000")
}

// serveFrom serves req through h as if it came from remote (host:port),
// to 127.0.0.1:10241 unless req names another Host, and returns the
// recorded answer.
func serveFrom(h http.Handler, req *http.Request, remote string) *httptest.ResponseRecorder {
	req.RemoteAddr = remote
	if req.Host == "example.com" { // httptest.NewRequest's, for a path alone
		req.Host = "127.0.0.1:10241"
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// writeWebConfig writes a web config file of the lines given, and
// returns its path.
func writeWebConfig(t testing.TB, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "web.yml")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// loadWebConfig checks the web config at path as serve's start does.
func loadWebConfig(t testing.TB, path string) *WebConfig {
	t.Helper()
	wc, err := LoadWebConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	return wc
}

// usersLine is a web config's basic_auth_users for one user and password,
// hashed at bcrypt's lowest cost, which is quick to check.
func usersLine(t testing.TB, user, password string) string {
	t.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("basic_auth_users: {%s: '%s'}", user, hash)
}

// metrics are the samples of an exposition, by name and labels as
// written: `exopower_energy_joules_total{component="cpu"}`.
type metrics map[string]float64

// parseMetrics reads the Prometheus text format.
func parseMetrics(r io.Reader) (metrics, error) {
	m := metrics{}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			return nil, fmt.Errorf("metric line %q has no value", line)
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			return nil, fmt.Errorf("metric line %q: %v", line, err)
		}
		m[line[:i]] = v
	}
	return m, sc.Err()
}

// scrape gets /metrics from url and parses it.
func scrape(url string) (metrics, error) {
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	return parseMetrics(resp.Body)
}

// waitUntil polls cond until it holds, for at most a minute: a guard
// against a hang, not a limit on speed.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("a minute on, still waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// relErr is |got - want| / want.
func relErr(got, want float64) float64 {
	if want == 0 {
		return got
	}
	d := (got - want) / want
	if d < 0 {
		return -d
	}
	return d
}
