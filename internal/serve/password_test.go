package serve

import (
	"fmt"
	"net/http"
	"net/http/httptest"
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
	line := func(user string, cost int) string {
		hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), cost)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("  %s: '%s'", user, hash)
	}
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
