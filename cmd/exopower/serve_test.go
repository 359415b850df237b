package main

import (
	"bufio"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/testfiles"

	"golang.org/x/crypto/bcrypt"

	"github.com/exopower/exopower/internal/fakepm"
	"github.com/exopower/exopower/internal/wire"
)

// stepped is the fake's power in these tests: steps that a wrong
// placement or integration of windows would show.
const stepped = "period=0.9 0=5,2,1 0.5=14,6,2.5"

// served is an exopower serve running as a real process over the fake
// powermetrics.
type served struct {
	cmd     *exec.Cmd
	url     string // http://127.0.0.1:PORT
	addr    string // 127.0.0.1:PORT
	pid     int
	pidfile string // the fake's
	profile fakepm.Profile
	mu      sync.Mutex
	stderr  []string
	drained chan struct{}
	ended   sync.Once // by stop or kill, whichever comes first
}

// startServe is every test's exopower serve: it runs one on a free
// loopback port (unless args say another --listen), over the fake at
// profile with env added to the fake's environment, and stops it
// (SIGTERM) when the test ends, checking that it exits 0 and leaves no
// powermetrics behind.
func startServe(t *testing.T, profile string, env []string, args ...string) *served {
	t.Helper()
	return startServeWith(t, profile, env, nil, args...)
}

// startServeWith is startServe with the command changed by change, when
// not nil, before it starts.
func startServeWith(t *testing.T, profile string, env []string, change func(*exec.Cmd), args ...string) *served {
	t.Helper()
	prof, err := fakepm.ParseProfile(profile)
	if err != nil {
		t.Fatal(err)
	}
	cmd, dir := exopowerCmd(t, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	if change != nil {
		change(cmd)
	}
	cmd.Env = append(cmd.Env, append([]string{"FAKEPM_PROFILE=" + profile}, env...)...)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &served{cmd: cmd, pid: cmd.Process.Pid, pidfile: filepath.Join(dir, "powermetrics.pid"), profile: prof, drained: make(chan struct{})}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		s.stderr = append(s.stderr, sc.Text())
		if _, addr, ok := strings.Cut(sc.Text(), "listening on "); ok {
			addr, _, _ = strings.Cut(addr, " ")
			s.addr = strings.TrimPrefix(strings.TrimPrefix(addr, "http://"), "https://")
			s.url = "http://" + s.addr
			break
		}
	}
	// The rest of stderr is kept, so that exopower never blocks on it.
	go func() {
		defer close(s.drained)
		for sc.Scan() {
			s.mu.Lock()
			s.stderr = append(s.stderr, sc.Text())
			s.mu.Unlock()
		}
	}()
	t.Cleanup(func() { s.stop(t) })
	if s.url == "" {
		t.Fatalf("exopower serve did not say where it listens:\n%s", strings.Join(s.stderr, "\n"))
	}
	return s
}

func (s *served) stop(t *testing.T) {
	t.Helper()
	s.ended.Do(func() {
		s.cmd.Process.Signal(syscall.SIGTERM)
		<-s.drained
		if code := exitCode(t, s.cmd.Wait()); code != 0 {
			s.mu.Lock()
			t.Errorf("exopower serve exited %d after SIGTERM; stderr:\n%s", code, strings.Join(s.stderr, "\n"))
			s.mu.Unlock()
		}
		// A serve that reads IOReport started no powermetrics.
		if _, err := os.Stat(s.pidfile); err == nil {
			fakepm.AssertGone(t, s.pidfile)
		}
	})
}

// kill ends the serve with SIGKILL, as a node that dies, and waits for it.
func (s *served) kill() {
	s.ended.Do(func() {
		s.cmd.Process.Kill()
		<-s.drained
		s.cmd.Wait()
	})
}

// do makes a request and decodes the JSON answer into v (unless v is
// nil); it returns the status.
func do(t *testing.T, method, url string, v any) int {
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
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s %s: %v in %q", method, url, err, b)
		}
	}
	return resp.StatusCode
}

func (s *served) status(t *testing.T) wire.Status {
	t.Helper()
	var st wire.Status
	if code := do(t, http.MethodGet, s.url+"/v1/status", &st); code != http.StatusOK {
		t.Fatalf("GET /v1/status: %d", code)
	}
	return st
}

// waitStatus polls the status until cond holds, for at most a minute.
func (s *served) waitStatus(t *testing.T, what string, cond func(wire.Status) bool) wire.Status {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		st := s.status(t)
		if cond(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("a minute on, still waiting for %s: %+v", what, st)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	x, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// jsonKeys returns the sorted keys of a JSON object.
func jsonKeys(t *testing.T, b []byte) []string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%v in %q", err, b)
	}
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// runJSONKeys are the keys of exopower run --json.
func runJSONKeys(t *testing.T) []string {
	t.Helper()
	cmd, _ := exopowerCmd(t, "run", "-i", "50ms", "--json", "--", "true")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("exopower run --json: %v", err)
	}
	return jsonKeys(t, out)
}

// A span opened and ended over HTTP is the fake's exact energy over
// [started_at, ended_at] by the node's clock, within 0.5 %; read while
// open, the energy so far; its fields are run --json's and a span's own.
// The status's counters are the exact energy of the windows covered.
func TestServeMeasuresASpanAtKnownPower(t *testing.T) {
	t.Parallel()
	s := startServe(t, stepped, nil, "--node-name", "test-node", "-i", "100ms")
	prof, _ := fakepm.ParseProfile(stepped)
	// Once the stream is settled: its first document can wait longer in
	// the pipe than those after it (see TestASpanOverHTTPIsTheExactEnergy
	// in internal/serve).
	before := s.waitStatus(t, "5 windows", func(st wire.Status) bool { return st.Samples >= 5 })
	var o wire.Opened
	var raw json.RawMessage
	if code := do(t, http.MethodPost, s.url+"/v1/spans", &raw); code != http.StatusCreated {
		t.Fatalf("POST /v1/spans: %d %s", code, raw)
	}
	json.Unmarshal(raw, &o)
	if got := jsonKeys(t, raw); !slices.Equal(got, []string{"id", "node", "started_at", "url"}) || o.Node != "test-node" {
		t.Errorf("POST /v1/spans: %s", raw)
	}
	started := mustTime(t, o.StartedAt)
	read := func(method, path string) (wire.Reading, []string) {
		t.Helper()
		var b json.RawMessage
		if code := do(t, method, s.url+path, &b); code != http.StatusOK {
			t.Fatalf("%s %s: %d %s", method, path, code, b)
		}
		var sp wire.Reading
		json.Unmarshal(b, &sp)
		return sp, jsonKeys(t, b)
	}
	// readUntil reads the open span until it holds n windows, for at most
	// a minute.
	readUntil := func(n int) (wire.Reading, []string) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for {
			sp, keys := read(http.MethodGet, o.URL)
			if sp.Samples >= n {
				return sp, keys
			}
			if time.Now().After(deadline) {
				t.Fatalf("a minute on, the span holds %d windows, want %d", sp.Samples, n)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	// Long enough that the pipe's delay, by which exopower's timeline
	// trails the fake's clock, is well inside 0.5 % at the edges, and so
	// is the rounding of each window's energy to whole millijoules.
	sofar, keys := readUntil(25)
	want := append(runJSONKeys(t), "id", "node", "open", "ended_at")
	slices.Sort(want)
	if !slices.Equal(keys, want) {
		t.Errorf("an open span's keys %v, want run --json's and a span's: %v", keys, want)
	}
	if !sofar.Open || sofar.EndedAt != nil || sofar.Type != "span" || sofar.ID != o.ID {
		t.Errorf("open span %+v", sofar)
	}
	fakepm.HoldEnergy(t, "read so far", sofar.EnergyJoules, prof, started, started.Add(time.Duration(float64(sofar.DurationSeconds)*1e9)), 0.5)
	readUntil(50)
	end, keys := read(http.MethodPost, o.URL+"/end")
	if !slices.Equal(keys, want) || end.Open || end.EndedAt == nil || end.Coverage != 1 || len(end.Warnings) != 0 || end.Node != "test-node" {
		t.Fatalf("ended span %+v, keys %v", end, keys)
	}
	ended := mustTime(t, *end.EndedAt)
	fakepm.HoldEnergy(t, "ended", end.EnergyJoules, prof, started, ended, 0.5)
	t.Logf("span of %.3f s in %d windows: %.4f J, true %.4f J", float64(end.DurationSeconds), end.Samples, float64(end.EnergyJoules.Total), prof.Energy(started, ended).Total())

	st := s.status(t)
	if st.Node != "test-node" || st.IntervalSeconds != 0.1 || st.Restarts != 0 || st.OpenSpans != 0 || len(st.SampleErrors) != 0 || st.LastWindow == nil {
		t.Fatalf("status %+v", st)
	}
	b, e := before.EnergyJoules, st.EnergyJoules
	fakepm.HoldEnergy(t, "status", wire.Components{Total: e.Total - b.Total, CPU: e.CPU - b.CPU, GPU: e.GPU - b.GPU, ANE: e.ANE - b.ANE},
		prof, mustTime(t, before.LastWindow.End), mustTime(t, st.LastWindow.End), 0.5)
	m := scrapeMetrics(t, s.url)
	// The status's numbers are rounded to 12 digits.
	if m["exopower_soc_energy_joules_total"] < float64(st.EnergyJoules.Total)*(1-1e-11) || m["exopower_samples_total"] < float64(st.Samples) {
		t.Errorf("a scrape after the status reads less: %v J in %v windows, status %v J in %d", m["exopower_soc_energy_joules_total"], m["exopower_samples_total"], st.EnergyJoules.Total, st.Samples)
	}
}

// scrapeMetrics gets /metrics and reads its samples, by name and labels as
// written.
func scrapeMetrics(t *testing.T, url string) map[string]float64 {
	t.Helper()
	m, err := tryScrape(url)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func tryScrape(url string) (map[string]float64, error) {
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	m := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if i < 0 || err != nil {
			return nil, fmt.Errorf("metric line %q", line)
		}
		m[line[:i]] = v
	}
	return m, sc.Err()
}

// counters are the metrics that must never go backwards.
var counters = []string{
	"exopower_soc_energy_joules_total",
	`exopower_energy_joules_total{component="cpu"}`,
	`exopower_energy_joules_total{component="gpu"}`,
	`exopower_energy_joules_total{component="ane"}`,
	"exopower_covered_seconds_total",
	"exopower_samples_total",
	"exopower_source_restarts_total",
}

// scraper scrapes url until stopped, and keeps every answer.
type scraper struct {
	stop chan struct{}
	done chan struct{}
	got  []map[string]float64
	errs []error
}

func startScraper(url string) *scraper {
	sc := &scraper{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(sc.done)
		for {
			select {
			case <-sc.stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			m, err := tryScrape(url)
			if err != nil {
				sc.errs = append(sc.errs, err)
				continue
			}
			sc.got = append(sc.got, m)
		}
	}()
	return sc
}

func (sc *scraper) finish() {
	close(sc.stop)
	<-sc.done
}

// powermetrics killed under a running serve is started again: the
// counters keep their values, the restart is counted, every scrape
// answers, the time without windows is not covered, and a span across it
// says so.
func TestServeKeepsCountingWhenPowermetricsIsKilled(t *testing.T) {
	t.Parallel()
	s := startServe(t, stepped, nil, "--node-name", "test-node", "-i", "100ms")
	s.waitStatus(t, "5 windows", func(st wire.Status) bool { return st.Samples >= 5 })
	var o struct {
		URL string `json:"url"`
	}
	if code := do(t, http.MethodPost, s.url+"/v1/spans", &o); code != http.StatusCreated {
		t.Fatalf("POST /v1/spans: %d", code)
	}
	sc := startScraper(s.url)
	before := s.status(t)
	pid, err := fakepm.ReadPid(s.pidfile)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	restarted := s.waitStatus(t, "the restart", func(st wire.Status) bool { return st.Restarts == 1 })
	seenRestart := time.Now()
	after := s.waitStatus(t, "3 windows of the new powermetrics", func(st wire.Status) bool { return st.Samples >= restarted.Samples+3 })
	var end wire.Reading
	if code := do(t, http.MethodPost, s.url+o.URL+"/end", &end); code != http.StatusOK {
		t.Fatalf("POST end: %d", code)
	}
	sc.finish()

	if len(sc.errs) > 0 {
		t.Errorf("%d of %d scrapes failed, the first: %v", len(sc.errs), len(sc.errs)+len(sc.got), sc.errs[0])
	}
	for i := 1; i < len(sc.got); i++ {
		for _, name := range counters {
			if sc.got[i][name] < sc.got[i-1][name] {
				t.Errorf("scrape %d: %s went back from %v to %v", i, name, sc.got[i-1][name], sc.got[i][name])
			}
		}
	}
	if n := len(sc.got); n < 2 || sc.got[n-1]["exopower_source_restarts_total"] != 1 {
		t.Errorf("%d scrapes; restarts at the last: %v, want 1", n, sc.got[n-1]["exopower_source_restarts_total"])
	}
	// Nothing between the last window before the kill and the first of
	// the new powermetrics is covered: at least the second of backoff, at
	// most up to when the restart was seen.
	a, b := mustTime(t, before.LastWindow.End), mustTime(t, after.LastWindow.End)
	uncovered := b.Sub(a).Seconds() - float64(after.CoveredSeconds-before.CoveredSeconds)
	t.Logf("%d scrapes; %.3f s of %.3f s not covered; span coverage %v", len(sc.got), uncovered, b.Sub(a).Seconds(), end.Coverage)
	if uncovered < 1 || uncovered > seenRestart.Sub(a).Seconds() {
		t.Errorf("%.3f s not covered, want from 1 s (the backoff) to %.3f s (the restart seen)", uncovered, seenRestart.Sub(a).Seconds())
	}
	// Under load the new powermetrics's first two documents can come in
	// one read: the first is placed by its arrival and the second has no
	// room. That is said in a warning of its own, and is the only other
	// warning allowed.
	restartSaid, others := false, 0
	for _, w := range end.Warnings {
		switch {
		case strings.Contains(w, "powermetrics stopped and was started again once"):
			restartSaid = true
		case !strings.Contains(w, "came in the same read as the one before them"):
			others++
		}
	}
	if !restartSaid || others > 0 || end.Coverage >= 1 {
		t.Errorf("span across the restart: coverage %v, warnings %q", end.Coverage, end.Warnings)
	}
	// Nor is the gap bridged: the energy is the truth over [a, b] less
	// that of the gap, at the profile's lowest power at least and its
	// highest at most (and 0.5 % for the pipe's delay).
	prof, _ := fakepm.ParseProfile(stepped)
	lowest, highest := math.Inf(1), 0.0
	for _, st := range prof.Steps {
		lowest, highest = min(lowest, st.W.Total()), max(highest, st.W.Total())
	}
	truth := prof.Energy(a, b).Total()
	got := float64(after.EnergyJoules.Total - before.EnergyJoules.Total)
	if lo, hi := truth-uncovered*highest-0.005*truth, truth-uncovered*lowest+0.005*truth; got < lo || got > hi {
		t.Errorf("%.3f J from before the kill to after the restart, want %.3f to %.3f J: the %.3f J over [a, b] less the gap's", got, lo, hi, truth)
	}
}

// A port in use is refused with exopower's status and a hint, before
// powermetrics starts.
func TestServeRefusesAPortInUse(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cmd, dir := exopowerCmd(t, "serve", "--listen", ln.Addr().String())
	out, err := cmd.CombinedOutput()
	if code := exitCode(t, err); code != 125 {
		t.Errorf("status %d, want 125", code)
	}
	for _, want := range []string{
		"exopower: error: --listen " + ln.Addr().String() + ": ",
		"address already in use",
		"exopower: hint: is another exopower serve running? choose another address with --listen",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "powermetrics.pid")); err == nil {
		t.Errorf("powermetrics was started")
	}
}

// With a web config that sets basic_auth_users, serve may listen beyond
// loopback; a client without the password gets 401, one with it 200, and
// may open spans from anywhere.
func TestServeWithPasswords(t *testing.T) {
	t.Parallel()
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	web := filepath.Join(t.TempDir(), "web.yml")
	if err := os.WriteFile(web, fmt.Appendf(nil, "basic_auth_users:\n  prom: %s\n", hash), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, stepped, nil, "--node-name", "test-node", "-i", "100ms", "--listen", "0.0.0.0:0", "--web.config.file", web)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(s.url, "http://"))
	url := "http://127.0.0.1:" + port
	for _, tt := range []struct {
		method, path string
		user, pass   string
		want         int
	}{
		{http.MethodGet, "/metrics", "", "", http.StatusUnauthorized},
		{http.MethodGet, "/v1/status", "", "", http.StatusUnauthorized},
		{http.MethodPost, "/v1/spans", "", "", http.StatusUnauthorized},
		{http.MethodGet, "/metrics", "prom", "wrong", http.StatusUnauthorized},
		{http.MethodGet, "/metrics", "prom", "s3cret", http.StatusOK},
		{http.MethodGet, "/v1/status", "prom", "s3cret", http.StatusOK},
		{http.MethodPost, "/v1/spans", "prom", "s3cret", http.StatusCreated},
	} {
		req, _ := http.NewRequest(tt.method, url+tt.path, nil)
		if tt.user != "" {
			req.SetBasicAuth(tt.user, tt.pass)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("%s %s as %q: %d, want %d", tt.method, tt.path, tt.user, resp.StatusCode, tt.want)
		}
	}
}

// Clients that send their headers slowly are cut off by the server's
// timeouts, and sampling goes on meanwhile: a span across them is whole.
func TestServeCutsOffSlowClients(t *testing.T) {
	t.Parallel()
	s := startServe(t, stepped, nil, "--node-name", "test-node", "-i", "100ms")
	var o struct {
		URL string `json:"url"`
	}
	if code := do(t, http.MethodPost, s.url+"/v1/spans", &o); code != http.StatusCreated {
		t.Fatalf("POST /v1/spans: %d", code)
	}
	const clients = 20
	cut := make(chan error, clients)
	for range clients {
		conn, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		go func() { cut <- slowClient(conn) }()
	}
	for range clients {
		if err := <-cut; err != nil {
			t.Error(err)
		}
	}
	var end wire.Reading
	if code := do(t, http.MethodPost, s.url+o.URL+"/end", &end); code != http.StatusOK {
		t.Fatalf("POST end: %d", code)
	}
	if end.Coverage != 1 || len(end.Warnings) != 0 || end.Samples < 5 {
		t.Errorf("span across the slow clients: coverage %v, %d windows, warnings %q", end.Coverage, end.Samples, end.Warnings)
	}
}

// slowClient sends a request's headers a line at a time, 200 ms apart,
// and returns nil once the server has closed the connection, or an error
// if a minute passes first (a guard against a hang, not a limit on speed).
func slowClient(conn net.Conn) error {
	deadline := time.Now().Add(time.Minute)
	fmt.Fprintf(conn, "GET /metrics HTTP/1.1\r\nHost: exopower\r\n")
	buf := make([]byte, 512)
	for time.Now().Before(deadline) {
		if _, err := fmt.Fprintf(conn, "X-Slow: %d\r\n", time.Now().UnixNano()); err != nil {
			return nil
		}
		conn.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		_, err := conn.Read(buf)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			continue
		}
		if err != nil {
			return nil // closed, or reset
		}
	}
	return fmt.Errorf("a client that sends its headers slowly was still connected a minute on")
}

// The web config is read at every request: passwords set under a running
// serve count at once, and from then on stay in force while the file is
// emptied or half written (an editor mid-save) or sets no users (a save
// cut short): this machine's clients need them too, and serve's stderr
// says what is wrong with the file. Before, this machine was served
// without a password meanwhile.
func TestServeReadsItsWebConfigAtEveryRequest(t *testing.T) {
	t.Parallel()
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	changed, err := bcrypt.GenerateFromPassword([]byte("n3w"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	users := fmt.Sprintf("basic_auth_users:\n  prom: %s\n", hash)
	web := filepath.Join(t.TempDir(), "web.yml")
	write := func(content string) {
		t.Helper()
		if err := os.WriteFile(web, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("basic_auth_users: {}\n")
	s := startServe(t, stepped, nil, "-i", "100ms", "--web.config.file", web)
	get := func(host, password string) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, s.url+"/v1/status", nil)
		req.Host = host
		if password != "" {
			req.SetBasicAuth("prom", password)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, tt := range []struct {
		file               string
		local, evil, proms int // without a password to 127.0.0.1 and to evil.example, and with it to evil.example
	}{
		{"basic_auth_users: {}\n", http.StatusOK, http.StatusForbidden, http.StatusForbidden},
		{users, http.StatusUnauthorized, http.StatusUnauthorized, http.StatusOK},
		{"basic_auth_users: {}\n", http.StatusUnauthorized, http.StatusUnauthorized, http.StatusOK},
		{"", http.StatusUnauthorized, http.StatusUnauthorized, http.StatusOK},
		{"basic_auth_users:\n  prom: [", http.StatusUnauthorized, http.StatusUnauthorized, http.StatusOK},
		{fmt.Sprintf("basic_auth_users:\n  prom: %s\n", changed), http.StatusUnauthorized, http.StatusUnauthorized, http.StatusUnauthorized},
		{users, http.StatusUnauthorized, http.StatusUnauthorized, http.StatusOK},
	} {
		write(tt.file)
		if local, evil, proms := get(s.addr, ""), get("evil.example", ""), get("evil.example", "s3cret"); local != tt.local || evil != tt.evil || proms != tt.proms {
			t.Errorf("web config %q: %d to %s, %d to evil.example, %d with the password; want %d, %d, %d", tt.file, local, s.addr, evil, proms, tt.local, tt.evil, tt.proms)
		}
	}
	s.mu.Lock()
	stderr := strings.Join(s.stderr, "\n")
	s.mu.Unlock()
	for _, want := range []string{
		"exopower serve: the web config " + web + " is empty: its last users stay in force until it is fixed",
		"exopower serve: the web config " + web + " cannot be used: yaml: ",
		"exopower serve: the web config " + web + " is in force again",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("no %q in serve's stderr:\n%s", want, stderr)
		}
	}
}

// serve says at start whether it speaks TLS, in the scheme of the URL it
// gives: the web config that its start checked decides it, for as long
// as serve runs. Before, a web config had it give no scheme at all.
func TestServeSaysWhetherItSpeaksTLSAtStart(t *testing.T) {
	t.Parallel()
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	pool := testfiles.SelfSigned(t, dir)
	for _, tt := range []struct {
		name, tls, scheme string
	}{
		{"TLS", "tls_server_config: {cert_file: cert.pem, key_file: key.pem}\n", "https://"},
		{"plain HTTP", "", "http://"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			web := filepath.Join(dir, tt.name+".yml")
			if err := os.WriteFile(web, fmt.Appendf(nil, "basic_auth_users:\n  prom: %s\n%s", hash, tt.tls), 0o600); err != nil {
				t.Fatal(err)
			}
			s := startServe(t, stepped, nil, "-i", "100ms", "--web.config.file", web)
			if want := "listening on " + tt.scheme + s.addr + " "; !strings.Contains(s.stderr[len(s.stderr)-1], want) {
				t.Errorf("no %q in %q", want, s.stderr[len(s.stderr)-1])
			}
			tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
			defer tr.CloseIdleConnections()
			req, _ := http.NewRequest(http.MethodGet, tt.scheme+s.addr+"/v1/status", nil)
			req.SetBasicAuth("prom", "s3cret")
			resp, err := (&http.Client{Transport: tr}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("GET %s: %d, want 200", req.URL, resp.StatusCode)
			}
		})
	}
}

// A web config that is a FIFO, or a link to a device, is refused at once
// (125, naming what it is): serve waited for good in its open, and
// SIGTERM did not end it.
func TestServeRefusesAWebConfigThatIsNoFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo, zero := filepath.Join(dir, "fifo.yml"), filepath.Join(dir, "zero.yml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	for path, what := range map[string]string{fifo: "is a FIFO, not a file", zero: "is a device, not a file"} {
		cmd, _ := exopowerCmd(t, "serve", "--web.config.file", path)
		done := make(chan []byte, 1)
		var err error
		go func() {
			out, e := cmd.CombinedOutput()
			err = e
			done <- out
		}()
		select {
		case out := <-done:
			if code := exitCode(t, err); code != 125 {
				t.Errorf("%s: status %d, want 125", path, code)
			}
			if want := "exopower: error: --web.config.file " + path + ": " + path + " " + what; !strings.Contains(string(out), want) {
				t.Errorf("no %q in:\n%s", want, out)
			}
		case <-time.After(time.Minute): // a guard against a hang, not a limit on speed
			cmd.Process.Kill()
			<-done
			t.Errorf("%s: a minute on, serve still waits on its web config", path)
		}
	}
}

// rawStream is a GET /v1/windows on a connection of its own.
type rawStream struct {
	conn net.Conn
	dec  *json.Decoder
}

func openRawStream(t *testing.T, addr string) *rawStream {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "GET /v1/windows HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/windows: %s", resp.Status)
	}
	return &rawStream{conn: conn, dec: json.NewDecoder(resp.Body)}
}

// after reads lines until one of a window that ended after at, and
// returns it.
func (r *rawStream) after(t *testing.T, at time.Time) wire.SampleLine {
	t.Helper()
	for {
		var l wire.SampleLine
		if err := r.dec.Decode(&l); err != nil {
			t.Fatalf("the stream: %v", err)
		}
		if mustTime(t, l.Time).After(at) {
			return l
		}
	}
}

// serve holds at most --web.max-connections, and never more than half of
// the files it may open: at 64, 32, whatever the flag says. The next
// connection waits to be accepted, rather than being refused; a
// powermetrics killed meanwhile is started again (the descriptors for its
// pipes were kept), and sampling goes on; once connections end, the
// waiting ones are answered.
func TestServeHoldsAtMostHalfItsFilesInConnections(t *testing.T) {
	t.Parallel()
	s := startServeWith(t, stepped, nil, func(cmd *exec.Cmd) {
		// Soft and hard at once: Go raises the soft limit to the hard.
		cmd.Args = append([]string{"sh", "-c", `ulimit -n 64 && exec "$0" "$@"`, cmd.Path}, cmd.Args[1:]...)
		cmd.Path = "/bin/sh"
	}, "-i", "100ms", "--node-name", "test-node")
	if want := "exopower serve: --web.max-connections 512 lowered to 32, half of the 64 files exopower may open (ulimit -n)"; !strings.Contains(strings.Join(s.stderr, "\n"), want) {
		t.Errorf("no %q in:\n%s", want, strings.Join(s.stderr, "\n"))
	}
	const held, waiting = 32, 40
	streams := make([]*rawStream, held)
	for i := range streams {
		streams[i] = openRawStream(t, s.addr)
		defer streams[i].conn.Close()
	}
	answered := make(chan int, waiting)
	for range waiting {
		conn, err := net.Dial("tcp", s.addr)
		if err != nil {
			t.Fatalf("a connection beyond the cap was refused: %v", err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "GET /v1/status HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", s.addr)
		go func() {
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				answered <- 0
				return
			}
			resp.Body.Close()
			answered <- resp.StatusCode
		}()
	}
	pid, err := fakepm.ReadPid(s.pidfile)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for {
		if again, err := fakepm.ReadPid(s.pidfile); err == nil && again != pid {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	restarted := time.Now()
	for _, st := range streams {
		st.after(t, restarted)
	}
	select {
	case code := <-answered:
		t.Fatalf("a connection beyond the %d held was served (%d)", held, code)
	default:
	}
	for _, st := range streams {
		st.conn.Close()
	}
	for range waiting {
		if code := <-answered; code != http.StatusOK {
			t.Errorf("a connection that waited: %d, want 200", code)
		}
	}
}

// --web.max-connections below one is refused before anything starts.
func TestServeRefusesNoConnections(t *testing.T) {
	t.Parallel()
	cmd, dir := exopowerCmd(t, "serve", "--web.max-connections", "0")
	out, err := cmd.CombinedOutput()
	if code := exitCode(t, err); code != 125 {
		t.Errorf("status %d, want 125", code)
	}
	for _, want := range []string{
		"exopower: error: --web.max-connections 0: serve needs at least one connection\n",
		"exopower: hint: the default is 512, as Prometheus's\n",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "powermetrics.pid")); err == nil {
		t.Errorf("powermetrics was started")
	}
}

// Ctrl-C ends serve with a line that says it stopped and why, what it
// answered, the spans its clients left open, and what it measured.
func TestServeSaysWhatItServedWhenItStops(t *testing.T) {
	t.Parallel()
	s := startServe(t, stepped, nil, "-i", "100ms")
	s.waitStatus(t, "2 windows", func(st wire.Status) bool { return st.Samples >= 2 })
	var o wire.Opened
	for range 2 {
		if code := do(t, http.MethodPost, s.url+"/v1/spans", &o); code != http.StatusCreated {
			t.Fatalf("POST /v1/spans: %d", code)
		}
	}
	if code := do(t, http.MethodPost, s.url+o.URL+"/end", nil); code != http.StatusOK {
		t.Fatalf("POST %s/end: %d", o.URL, code)
	}
	var code int
	s.ended.Do(func() {
		s.cmd.Process.Signal(os.Interrupt)
		<-s.drained
		code = exitCode(t, s.cmd.Wait())
	})
	last := s.stderr[len(s.stderr)-1]
	// Requests: waitStatus's GETs (at least one), two opens and an end.
	want := regexp.MustCompile(`^exopower serve: stopped \(interrupt\) after [0-9.ms]+: answered \d+ requests, 2 spans opened and 1 ended ` +
		`\(1 still open, which its client can no longer end\); measured [0-9.]+ J \(SoC\) over [0-9.ms]+ in \d+ windows$`)
	if code != 0 || !want.MatchString(last) {
		t.Errorf("serve exited %d after Ctrl-C, its last line %q; want 0 and a line of the form %s", code, last, want)
	}
}
