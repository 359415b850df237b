package serve

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// usersLines is a web config's basic_auth_users for each user named, whose
// password is the name and "-pw", hashed at bcrypt's lowest cost.
func usersLines(t testing.TB, names ...string) string {
	t.Helper()
	var users []string
	for _, n := range names {
		hash, err := bcrypt.GenerateFromPassword([]byte(n+"-pw"), bcrypt.MinCost)
		if err != nil {
			t.Fatal(err)
		}
		users = append(users, fmt.Sprintf("%s: '%s'", n, hash))
	}
	return "basic_auth_users: {" + strings.Join(users, ", ") + "}"
}

// as serves method path through h as user, with their password, from
// another machine ("" for no password, from this one).
func as(h http.Handler, user, method, path string) *httptest.ResponseRecorder {
	req := request{method, path, nil}.to("mac1:10241")
	if user == "" {
		return serveLocal(h, request{method, path, nil}.to("127.0.0.1:10241"))
	}
	req.SetBasicAuth(user, user+"-pw")
	return serveFrom(h, req, "192.0.2.7:40000")
}

// The requests of each role, and the role each needs.
var roleRequests = []struct{ method, path, role string }{
	{"GET", "/metrics", "scrape"},
	{"GET", "/v1/status", "scrape"},
	{"POST", "/v1/spans", "span"},
	{"GET", "/v1/spans/0123456789abcdef01234567", "span"},
	{"POST", "/v1/spans/0123456789abcdef01234567/end", "span"},
	{"GET", "/v1/windows", "span"},
	{"POST", "/v1/spans?pid=4242", "process"},
}

// Each user reaches what their roles grant and no more: every user may
// scrape; the span role (--web.span-users, every user when it is not
// given) opens, reads and ends spans and streams the windows; the process
// role (--web.process-users, no user unless named) opens spans that name
// a process, and grants the span role too. Before, every password opened
// spans that followed any process serve could read, Prometheus's too.
func TestEachRoleReachesWhatItGrantsAndNoMore(t *testing.T) {
	c := newClock()
	web := loadWebConfig(t, writeWebConfig(t, usersLines(t, "prom", "alice", "bob")))
	named := Config{Web: web, SpanUsers: []string{"alice"}, ProcessUsers: []string{"bob"}}
	for _, tc := range []struct {
		name  string
		cfg   Config
		user  string
		roles string
	}{
		{"a user that --web.span-users leaves out may only scrape", named, "prom", "scrape"},
		{"a user that --web.span-users names may open spans but follow no process", named, "alice", "scrape span"},
		{"a user that --web.process-users names may do both", named, "bob", "scrape span process"},
		{"without --web.span-users every user may open spans, and none follow a process", Config{Web: web}, "prom", "scrape span"},
		{"an empty --web.span-users leaves every user to scrape", Config{Web: web, SpanUsers: []string{}}, "alice", "scrape"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Processes, cfg.BeyondLoopback = processesOn(c, serverTree()), true
			s, _ := offline(t, c, cfg)
			h := s.Handler()
			for _, q := range roleRequests {
				rec := as(h, tc.user, q.method, q.path)
				if !strings.Contains(tc.roles, q.role) {
					msg := errorBody(t, rec, http.StatusForbidden)
					if flag := map[string]string{"span": "--web.span-users", "process": "--web.process-users"}[q.role]; !strings.Contains(msg, q.role+" role") || !strings.Contains(msg, flag) {
						t.Errorf("%s %s: %q does not name the %s role and %s", q.method, q.path, msg, q.role, flag)
					}
					continue
				}
				if rec.Code == http.StatusForbidden || rec.Code == http.StatusUnauthorized {
					t.Errorf("%s %s: %d %s, want it served", q.method, q.path, rec.Code, rec.Body)
				}
			}
		})
	}
}

// As root, serve may read every user's processes, and cannot tell which
// user of this Mac a client without a password is: such a client may
// follow a process only where serve is told that anyone may (a Mac of one
// user). A user of the process role may. Without root, the kernel lets
// serve read only its own user's processes, and any client of this Mac
// may follow those, as before. Before, as root, any local user followed
// any user's process, pid 1 and all.
func TestAsRootAProcessIsFollowedForTheProcessRoleOnly(t *testing.T) {
	c := newClock()
	web := loadWebConfig(t, writeWebConfig(t, usersLines(t, "alice", "bob")))
	for _, tc := range []struct {
		name string
		cfg  Config
		user string
		code int
		why  []string
	}{
		{"without root, this Mac's clients without a password may", Config{}, "", http.StatusCreated, nil},
		{"as root, this Mac's clients without a password may not", Config{Root: true}, "", http.StatusForbidden,
			[]string{"runs as root", "LaunchAgent", "--web.process-spans-without-password"}},
		{"as root, with --web.process-spans-without-password, they may", Config{Root: true, ProcessSpansWithoutPassword: true}, "", http.StatusCreated, nil},
		{"as root, a user of the process role may", Config{Root: true, Web: web, ProcessUsers: []string{"bob"}}, "bob", http.StatusCreated, nil},
		{"as root, a user without it may not", Config{Root: true, Web: web, ProcessUsers: []string{"bob"}}, "alice", http.StatusForbidden,
			[]string{"process role", "--web.process-users"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Processes, cfg.BeyondLoopback = processesOn(c, serverTree()), cfg.Web != nil
			s, _ := offline(t, c, cfg)
			rec := as(s.Handler(), tc.user, "POST", "/v1/spans?pid=4242")
			if rec.Code != tc.code {
				t.Fatalf("%d %s, want %d", rec.Code, rec.Body, tc.code)
			}
			for _, w := range tc.why {
				if !strings.Contains(rec.Body.String(), w) {
					t.Errorf("%s does not say %q", rec.Body, w)
				}
			}
		})
	}
}
