package serve

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// asProm is a GET of /metrics from another machine as prom with password.
func asProm(h http.Handler, password string) *httptest.ResponseRecorder {
	req := request{"GET", "/metrics", nil}.to("127.0.0.1:10241")
	req.SetBasicAuth("prom", password)
	return serveFrom(h, req, "192.0.2.7:40000")
}

// Wrong guesses neither push a right password out of what serve
// remembers nor hold a scrape up behind them: before, 101 wrong guesses
// emptied the verdicts remembered, and 50 more at once, checked one at a
// time, kept Prometheus's scrape waiting on bcrypt past its 10 s. Only
// right passwords are remembered, and beyond MaxPasswordChecks running
// or waiting, a check is refused at once (503, Retry-After, the
// connection closed) rather than queued.
func TestWrongGuessesNeitherPushARightPasswordOutNorHoldItUp(t *testing.T) {
	s, _ := offline(t, newClock(), Config{Web: loadWebConfig(t, writeWebConfig(t, usersLine(t, "prom", "s3cret"))), BeyondLoopback: true})
	h := s.Handler()
	if rec := asProm(h, "s3cret"); rec.Code != http.StatusOK {
		t.Fatalf("with the password: %d %s", rec.Code, rec.Body)
	}
	for i := range cacheSize + 1 {
		errorBody(t, asProm(h, fmt.Sprintf("guess%d", i)), http.StatusUnauthorized)
	}
	// From now on, each comparison waits until the test lets it end.
	entered, release := make(chan string, MaxPasswordChecks+2), make(chan struct{})
	s.web.compare = func(hash, password []byte) error {
		entered <- string(password)
		<-release
		return bcrypt.CompareHashAndPassword(hash, password)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	var once sync.Once
	letGo := func() { once.Do(func() { close(release) }) }
	defer letGo()
	for i := range MaxPasswordChecks {
		wg.Go(func() {
			if rec := asProm(h, fmt.Sprintf("again%d", i)); rec.Code != http.StatusUnauthorized {
				t.Errorf("a wrong guess: %d %s, want 401", rec.Code, rec.Body)
			}
		})
	}
	<-entered // one is being checked: the rest wait
	waitUntil(t, fmt.Sprintf("%d password checks running or waiting", MaxPasswordChecks), func() bool {
		return s.web.checks.Load() == MaxPasswordChecks
	})

	// Each answer below is due at once; a minute guards against a hang.
	answer := func(password string) (*httptest.ResponseRecorder, string) {
		done := make(chan *httptest.ResponseRecorder, 1)
		go func() { done <- asProm(h, password) }()
		select {
		case rec := <-done:
			return rec, ""
		case p := <-entered:
			letGo()
			<-done
			return nil, fmt.Sprintf("the password %q was checked with bcrypt, behind the wrong guesses", p)
		case <-time.After(time.Minute):
			letGo()
			<-done
			return nil, "a minute on, still waiting behind the wrong guesses"
		}
	}
	rec, why := answer("s3cret")
	if why != "" {
		t.Fatalf("the scrape with the password: %s", why)
	}
	if rec.Code != http.StatusOK {
		t.Errorf("the scrape with the password: %d %s, want 200", rec.Code, rec.Body)
	}
	rec, why = answer("one more")
	if why != "" {
		t.Fatalf("one check too many: %s", why)
	}
	msg := errorBody(t, rec, http.StatusServiceUnavailable)
	if !strings.Contains(msg, "try again") || rec.Header().Get("Retry-After") == "" || rec.Header().Get("Connection") != "close" {
		t.Errorf("one check too many: %q, Retry-After %q, Connection %q; want to try again, Retry-After, Connection close",
			msg, rec.Header().Get("Retry-After"), rec.Header().Get("Connection"))
	}
	letGo()
	for range MaxPasswordChecks - 1 {
		<-entered
	}
}

// The password of a user the config does not know is compared with a
// hash of the highest cost among its users: the time of an answer tells
// no one which users exist. Before, it was a hash of cost 10 whatever
// the users' (12 is common): an unknown user was answered sooner.
func TestAnUnknownUserIsCheckedAtTheCostOfTheDearestUser(t *testing.T) {
	line := func(user string, cost int) string { return userLine(t, user, "s3cret", cost) }
	const dearest = bcrypt.MinCost + 2
	path := writeWebConfig(t, "basic_auth_users:", line("prom", bcrypt.MinCost), line("alice", dearest), line("bob", bcrypt.MinCost+1))
	s, _ := offline(t, newClock(), Config{Web: loadWebConfig(t, path)})
	var costs []int
	s.web.compare = func(hash, password []byte) error {
		n, err := bcrypt.Cost(hash)
		if err != nil {
			t.Errorf("compared with %q: %v", hash, err)
		}
		costs = append(costs, n)
		return bcrypt.CompareHashAndPassword(hash, password)
	}
	for _, user := range []string{"nobody", "root", "prom2"} {
		req := request{"GET", "/metrics", nil}.to("127.0.0.1:10241")
		req.SetBasicAuth(user, "s3cret")
		errorBody(t, serveLocal(s.Handler(), req), http.StatusUnauthorized)
	}
	for _, n := range costs {
		if n != dearest {
			t.Errorf("an unknown user's password compared at cost %d, want %d (the dearest user's)", n, dearest)
		}
	}
	if len(costs) != 3 {
		t.Errorf("%d comparisons for 3 unknown users, want 3", len(costs))
	}
}

// Every check does the work of one bcrypt comparison at the dearest
// cost among the users, whoever the user and whatever the password: the
// time of an answer tells neither which users exist nor which one was
// asked. Before, a user of cost 10 was answered in 56 ms, one of cost 12
// and unknown users in 223 ms (medians of 50): each password was
// compared with its user's hash only. bcrypt's work is 2^cost rounds.
func TestEveryCheckDoesTheWorkOfTheDearestUser(t *testing.T) {
	const dearest = bcrypt.MinCost + 2
	path := writeWebConfig(t, "basic_auth_users:",
		userLine(t, "prom", "s3cret", bcrypt.MinCost), userLine(t, "bob", "s3cret", bcrypt.MinCost+1), userLine(t, "alice", "s3cret", dearest))
	s, _ := offline(t, newClock(), Config{Web: loadWebConfig(t, path)})
	var rounds int
	s.web.compare = func(hash, password []byte) error {
		n, err := bcrypt.Cost(hash)
		if err != nil {
			t.Errorf("compared with %q: %v", hash, err)
		}
		rounds += 1 << n
		return bcrypt.CompareHashAndPassword(hash, password)
	}
	for _, password := range []string{"wrong", "s3cret"} {
		for _, user := range []string{"prom", "bob", "alice", "nobody"} {
			t.Run(user+" with "+password, func(t *testing.T) {
				rounds = 0
				req := request{"GET", "/metrics", nil}.to("127.0.0.1:10241")
				req.SetBasicAuth(user, password)
				want := http.StatusUnauthorized
				if password == "s3cret" && user != "nobody" {
					want = http.StatusOK
				}
				if rec := serveLocal(s.Handler(), req); rec.Code != want {
					t.Errorf("%d %s, want %d", rec.Code, rec.Body, want)
				}
				if rounds != 1<<dearest {
					t.Errorf("the check did %d rounds of bcrypt, want %d (one comparison at cost %d, the dearest user's)", rounds, 1<<dearest, dearest)
				}
			})
		}
	}
}

// A check whose client has gone (its request's context done) is given
// up: one waiting for the check at a time stops waiting, its place among
// MaxPasswordChecks freed at once, and one not yet begun is not begun.
// Before, each was carried out in its turn, holding its place and every
// check behind it for bcrypt's time, though no one was there for the
// answer. A comparison already running runs to its end.
func TestACheckWhoseClientHasGoneIsGivenUp(t *testing.T) {
	s, _ := offline(t, newClock(), Config{Web: loadWebConfig(t, writeWebConfig(t, usersLine(t, "prom", "s3cret"))), BeyondLoopback: true})
	h := s.Handler()
	var mu sync.Mutex
	var compared []string
	entered, release := make(chan struct{}), make(chan struct{})
	s.web.compare = func(hash, password []byte) error {
		mu.Lock()
		compared = append(compared, string(password))
		mu.Unlock()
		if string(password) == "held" {
			close(entered)
			<-release
		}
		return bcrypt.CompareHashAndPassword(hash, password)
	}
	ask := func(ctx context.Context, password string) *httptest.ResponseRecorder {
		req := request{"GET", "/metrics", nil}.to("127.0.0.1:10241").WithContext(ctx)
		req.SetBasicAuth("prom", password)
		return serveFrom(h, req, "192.0.2.7:40000")
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	errorBody(t, ask(ctx, "gone before"), http.StatusServiceUnavailable)

	held := make(chan *httptest.ResponseRecorder, 1)
	go func() { held <- ask(context.Background(), "held") }()
	<-entered
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	waiting := make(chan *httptest.ResponseRecorder, 1)
	go func() { waiting <- ask(ctx, "gone while waiting") }()
	waitUntil(t, "the second check waiting", func() bool { return s.web.checks.Load() == 2 })
	cancel()
	select {
	case rec := <-waiting:
		errorBody(t, rec, http.StatusServiceUnavailable)
		if n := s.web.checks.Load(); n != 1 {
			t.Errorf("%d checks running or waiting, want 1 (the one running)", n)
		}
		close(release)
	case <-time.After(time.Minute): // a guard against a hang, not a limit on speed
		t.Error("a minute on, the check whose client has gone still waits for the one running")
		close(release)
		<-waiting
	}
	errorBody(t, <-held, http.StatusUnauthorized)
	if rec := ask(context.Background(), "s3cret"); rec.Code != http.StatusOK {
		t.Errorf("with the password after them: %d %s, want 200", rec.Code, rec.Body)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"held", "s3cret"}; !slices.Equal(compared, want) {
		t.Errorf("compared %q, want %q: the checks whose client had gone were carried out", compared, want)
	}
}

// userLine is a line of a web config's basic_auth_users in block style:
// user and password hashed at cost.
func userLine(t testing.TB, user, password string, cost int) string {
	t.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte(password), cost)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("  %s: '%s'", user, hash)
}

// costlyHash is a hash of bcrypt's shape at cost, made without the work
// of making a real one (days at cost 31); no password matches it.
func costlyHash(cost int) string {
	return fmt.Sprintf("$2y$%02d$%s", cost, strings.Repeat("x", 53))
}

// misshapen are hashes that exporter-toolkit's check (bcrypt.Cost) took,
// but that no bcrypt hash is: made from a real one at the lowest cost.
func misshapen(t testing.TB) []struct{ name, hash string } {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	s := string(h)
	return []struct{ name, hash string }{
		{"a space in its salt (its checks failed at once)", s[:10] + " " + s[11:]},
		{"cut short by one character", s[:59]},
		{"one character too many", s + "x"},
		{"a version that is not bcrypt's", "$1" + s[2:]},
	}
}

// A hash that no login can afford to check, or that is no bcrypt hash,
// is refused at serve's start, naming the user, what is wrong and how to
// make a good one. Before, a hash of cost 31 was taken: one request of a
// user the file does not know then held the one check at a time for
// more than a day, every password not yet remembered waiting behind it
// or refused; and a space in a hash's salt was taken, its user's checks
// failing at once, which told that user from the others by time.
func TestAHashNoLoginCanAffordOrNoBcryptHashIsRefused(t *testing.T) {
	const remake = "make the hash again with cost 10 to 12 (htpasswd -nBC 12 alice, which asks for the password)"
	type hash struct{ name, hash, says string }
	hashes := []hash{
		{"cost 31", costlyHash(31), "user alice's bcrypt cost 31 is above 14, the most serve accepts: a check at cost 31 takes about "},
		{"cost 15", costlyHash(15), "user alice's bcrypt cost 15 is above 14, the most serve accepts: a check at cost 15 takes about "},
	}
	for _, m := range misshapen(t) {
		hashes = append(hashes, hash{m.name, m.hash, "user alice's password hash is no bcrypt hash"})
	}
	for _, tt := range hashes {
		t.Run(tt.name, func(t *testing.T) {
			path := writeWebConfig(t, "basic_auth_users:", userLine(t, "prom", "s3cret", bcrypt.MinCost), "  alice: '"+tt.hash+"'")
			_, err := LoadWebConfig(path)
			if err == nil {
				t.Fatal("taken, want an error")
			}
			for _, want := range []string{tt.says, remake} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			if strings.Contains(err.Error(), tt.hash) {
				t.Errorf("error %q quotes the hash", err)
			}
		})
	}
	for cost := bcrypt.MinCost; cost <= MaxBcryptCost; cost++ {
		if _, err := LoadWebConfig(writeWebConfig(t, "basic_auth_users:", "  alice: '"+costlyHash(cost)+"'")); err != nil {
			t.Errorf("a hash of cost %d: %v, want it taken", cost, err)
		}
	}
}
