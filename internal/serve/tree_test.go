package serve

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/attrib"
	"github.com/exopower/exopower/internal/fakepm"
	"github.com/exopower/exopower/internal/wire"
)

const ms = time.Millisecond

// serverTree is fakepm's model server, without the browser.
func serverTree() []fakepm.Process { return fakepm.ServerTree()[:4] }

// processesOn is a Config.Processes over table, on the clock c.
func processesOn(c *clock, table []fakepm.Process) func() (attrib.Kernel, error) {
	return func() (attrib.Kernel, error) { return fakepm.NewProcesses(table, c.Now), nil }
}

// A span that names a process holds the energy of its tree over the
// span, counted from the span's start, and says what it could not read.
func TestASpanThatNamesAProcessHoldsItsTreesEnergy(t *testing.T) {
	c := newClock()
	s, _ := offline(t, c, Config{Processes: processesOn(c, serverTree())})
	h := s.Handler()
	rec := serveLocal(h, httptest.NewRequest(http.MethodPost, "/v1/spans?pid=4242", nil))
	if rec.Code != http.StatusCreated {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	url := rec.Header().Get("Location")
	var r wire.Reading
	// The polls, at 0.3 s and 0.5 s of the fake's time, as the poller
	// makes them every 0.1 s of the real clock.
	for _, at := range []time.Duration{300 * ms, 200 * ms} {
		c.advance(at)
		s.pollTrees()
		rec = serveLocal(h, httptest.NewRequest(http.MethodGet, url, nil))
		decode(t, rec, &r)
	}
	c.advance(500 * ms) // 1 s from the start
	rec = serveLocal(h, httptest.NewRequest(http.MethodPost, url+"/end", nil))
	decode(t, rec, &r)
	a := r.Attribution
	if a == nil {
		t.Fatalf("no attribution: %s", rec.Body)
	}
	// server 3 J and worker 2 J over the second; the request 1 J read
	// at 0.5 s, its last 0.4 J unseen until the server reaped it.
	e := a.EnergyJoules
	if math.Abs(float64(e.CPU)-6) > 1e-6 || math.Abs(float64(e.UnseenCPU)-0.4) > 1e-5 || a.ProcessesRead != 3 || a.ProcessesNotReadable != 1 || a.ProcessesRunningAtEnd != 2 {
		t.Errorf("%+v: want 6 J read, 0.4 J unseen, 3 read, 1 not, 2 running", a)
	}
	if s.holding() != 0 {
		t.Error("a span left open")
	}
}

// A span that names a process that cannot be followed is refused, with
// why, before it opens.
func TestASpanThatNamesAProcessItCannotFollowIsRefused(t *testing.T) {
	c := newClock()
	theirs := serverTree()
	theirs[0].AnotherUsers = true
	for _, tc := range []struct {
		query string
		cfg   Config
		code  int
		why   string
	}{
		{"pid=1&pid=2", Config{Processes: processesOn(c, serverTree())}, http.StatusBadRequest, "one process id"},
		{"pid=4242", Config{Processes: processesOn(c, nil)}, http.StatusNotFound, "no process 4242 that this serve may follow"},
		{"pid=4242", Config{Processes: processesOn(c, theirs)}, http.StatusNotFound, "no process 4242 that this serve may follow"},
		{"pid=4242", Config{}, http.StatusNotImplemented, "reads no processes"},
		{"pid=4242", Config{Processes: func() (attrib.Kernel, error) {
			k := fakepm.NewProcesses(serverTree(), c.Now)
			k.MacOS = "12.7"
			return k, nil
		}}, http.StatusNotImplemented, "keeps no energy per process (macOS 12.7"},
	} {
		s, _ := offline(t, c, tc.cfg)
		rec := serveLocal(s.Handler(), httptest.NewRequest(http.MethodPost, "/v1/spans?"+tc.query, nil))
		if rec.Code != tc.code || !strings.Contains(rec.Body.String(), tc.why) || s.holding() != 0 {
			t.Errorf("?%s: %d %s, %d spans: want %d, %q, none", tc.query, rec.Code, rec.Body, s.holding(), tc.code, tc.why)
		}
	}
}

// A pid is given as ps gives it: decimal digits, no sign, no spaces, no
// leading zero, and no more than a pid can be. Before, strconv took
// pid=%2B5 (+5) for process 5.
func TestAPidIsGivenInPlainDecimalDigits(t *testing.T) {
	c := newClock()
	for _, tc := range []struct {
		name, query string
		code        int
	}{
		{"a plain pid is taken", "pid=4242", http.StatusCreated},
		{"a plus sign is refused", "pid=%2B4242", http.StatusBadRequest},
		{"a plus left as it is, a space in a query, is refused", "pid=+4242", http.StatusBadRequest},
		{"a minus sign is refused", "pid=-3", http.StatusBadRequest},
		{"a leading zero is refused", "pid=04242", http.StatusBadRequest},
		{"a space before is refused", "pid=%204242", http.StatusBadRequest},
		{"a space after is refused", "pid=4242%20", http.StatusBadRequest},
		{"nothing is refused", "pid=", http.StatusBadRequest},
		{"zero is refused", "pid=0", http.StatusBadRequest},
		{"hexadecimal is refused", "pid=0x10", http.StatusBadRequest},
		{"an underscore is refused", "pid=4_242", http.StatusBadRequest},
		{"digits of another script are refused", "pid=%D9%A5", http.StatusBadRequest},
		{"a number beyond any pid is refused", "pid=2147483648", http.StatusBadRequest},
		{"a word is refused", "pid=abc", http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := offline(t, c, Config{Processes: processesOn(c, serverTree())})
			rec := serveLocal(s.Handler(), httptest.NewRequest(http.MethodPost, "/v1/spans?"+tc.query, nil))
			if rec.Code != tc.code {
				t.Fatalf("?%s: %d %s, want %d", tc.query, rec.Code, rec.Body, tc.code)
			}
			if tc.code == http.StatusBadRequest && !strings.Contains(rec.Body.String(), "decimal digits") {
				t.Errorf("?%s: %s does not say how to give a pid", tc.query, rec.Body)
			}
		})
	}
}

// A process that does not exist and one that serve may not follow are
// refused alike, so that the answer tells no one which pids run: before,
// the first got 404 and the second 403.
func TestNoProcessAndAProcessServeMayNotFollowAreRefusedAlike(t *testing.T) {
	c := newClock()
	theirs := serverTree()
	theirs[0].AnotherUsers = true
	answer := func(table []fakepm.Process) *httptest.ResponseRecorder {
		s, _ := offline(t, c, Config{Processes: processesOn(c, table)})
		return serveLocal(s.Handler(), httptest.NewRequest(http.MethodPost, "/v1/spans?pid=4242", nil))
	}
	none, other := answer(nil), answer(theirs)
	if none.Code != other.Code || none.Body.String() != other.Body.String() {
		t.Errorf("no process: %d %s; another user's: %d %s; want the same answer", none.Code, none.Body, other.Code, other.Body)
	}
}

// decode decodes an answer of 200 into v.
func decode(t *testing.T, rec *httptest.ResponseRecorder, v any) {
	t.Helper()
	if rec.Code != http.StatusOK {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	if err := json.Unmarshal(rec.Body.Bytes(), v); err != nil {
		t.Fatalf("%v in %s", err, rec.Body)
	}
}

// Spans that name a process are bounded: each reads the process list ten
// times a second. An ended one gives its place back. Each user holds at
// most their share, so it takes several to fill the places.
func TestSpansThatNameAProcessAreBounded(t *testing.T) {
	c := newClock()
	users := []string{"u1", "u2", "u3", "u4", "u5"}
	web := loadWebConfig(t, writeWebConfig(t, usersLines(t, users...)))
	s, _ := offline(t, c, Config{Web: web, BeyondLoopback: true, ProcessUsers: users, Processes: processesOn(c, serverTree())})
	h := s.Handler()
	first := fillProcessSpans(t, h, users)
	rec := as(h, "u5", "POST", "/v1/spans?pid=4242")
	if rec.Code != http.StatusTooManyRequests || !strings.Contains(rec.Body.String(), "name a process are open, the most there may be") {
		t.Fatalf("one more: %d %s, want 429", rec.Code, rec.Body)
	}
	// A span that names none is not held up.
	if rec := as(h, "u1", "POST", "/v1/spans"); rec.Code != http.StatusCreated {
		t.Errorf("a span of the Mac alone: %d %s", rec.Code, rec.Body)
	}
	decode(t, as(h, "u1", "POST", first+"/end"), &wire.Reading{})
	if rec := as(h, "u5", "POST", "/v1/spans?pid=4242"); rec.Code != http.StatusCreated {
		t.Errorf("once one ended: %d %s", rec.Code, rec.Body)
	}
}

// sleepTree is one process, as `sleep 0.3` named by a span as it starts:
// 2 W until it ends at 0.3 s, reaped at 0.35 s.
func sleepTree() []fakepm.Process {
	return []fakepm.Process{{Name: "sleep", ID: 1000, ParentID: 1, Born: -time.Second, Exits: 300 * ms, Reaped: 350 * ms, Watts: 2}}
}

// statusAs is the server's /v1/status, asked by user.
func statusAs(t *testing.T, h http.Handler, user string) wire.Status {
	t.Helper()
	var st wire.Status
	decode(t, as(h, user, "GET", "/v1/status"), &st)
	return st
}

// A span whose process tree has been gone for TreeGoneAfter gives its
// place back and is read no more; its reading, the tree's energy up to
// its end, answers GET and end until it expires. Before, 16 spans that
// named processes long ended held every place for a day, and each was
// read every second meanwhile.
func TestASpanWhoseProcessesAreGoneGivesItsPlaceBack(t *testing.T) {
	c := newClock()
	users := []string{"u1", "u2", "u3", "u4", "u5"}
	web := loadWebConfig(t, writeWebConfig(t, usersLines(t, users...)))
	s, _ := offline(t, c, Config{Web: web, BeyondLoopback: true, ProcessUsers: users, Processes: processesOn(c, sleepTree())})
	h := s.Handler()
	first := fillProcessSpans(t, h, users)
	full := func(when string) {
		t.Helper()
		if rec := as(h, "u5", "POST", "/v1/spans?pid=4242"); rec.Code != http.StatusTooManyRequests {
			t.Fatalf("%s: %d %s, want 429", when, rec.Code, rec.Body)
		}
	}
	full("the processes running")
	c.advance(320 * ms) // the process a zombie, read as such
	s.pollTrees()
	c.advance(680 * ms) // reaped
	s.pollTrees()
	s.Reclaim()
	full("the trees just gone")
	c.advance(TreeGoneAfter - ms)
	s.Reclaim()
	full(fmt.Sprintf("the trees gone for %v", TreeGoneAfter-ms))
	c.advance(ms)
	if n := s.Reclaim(); n != MaxProcessSpans {
		t.Errorf("%d spans ended, want the %d whose trees are gone", n, MaxProcessSpans)
	}
	if st := statusAs(t, h, "u5"); st.OpenProcessSpans != 0 || st.MaxProcessSpans != MaxProcessSpans || st.OpenSpans != MaxProcessSpans {
		t.Errorf("status: %d of %d places held, %d spans kept: want none, and the %d kept for their clients", st.OpenProcessSpans, st.MaxProcessSpans, st.OpenSpans, MaxProcessSpans)
	}
	s.mu.Lock()
	done := s.spans[strings.TrimPrefix(first, "/v1/spans/")].tree.done
	s.mu.Unlock()
	select {
	case <-done:
	default:
		t.Error("a tree gone is still read")
	}
	if rec := as(h, "u5", "POST", "/v1/spans?pid=4242"); rec.Code != http.StatusCreated {
		t.Errorf("the places given back: %d %s, want 201", rec.Code, rec.Body)
	}
	for _, how := range []string{"GET", "POST"} {
		path := map[string]string{"GET": first, "POST": first + "/end"}[how]
		var r wire.Reading
		decode(t, as(h, "u1", how, path), &r)
		if r.Open || r.EndedAt == nil || r.Attribution == nil || math.Abs(float64(r.Attribution.EnergyJoules.CPU)-0.6) > 1e-6 {
			t.Errorf("%s %s: open %v, ended %v, attribution %+v: want the tree's 0.6 J, ended", how, path, r.Open, r.EndedAt, r.Attribution)
		}
	}
	if rec := as(h, "u1", "POST", first+"/end"); rec.Code != http.StatusNotFound {
		t.Errorf("ended again: %d %s, want 404", rec.Code, rec.Body)
	}
}

// One client holds at most MaxProcessSpansPerClient of the places, so
// that one user, or a script that crashes in a loop, leaves the rest to
// others: a user of the web config, whatever its address, and this Mac's
// clients without a password, from any loopback address, as one client
// (any user of the Mac may send from any of them).
func TestOneClientHoldsAtMostItsShareOfTheProcessSpans(t *testing.T) {
	c := newClock()
	web := loadWebConfig(t, writeWebConfig(t, usersLines(t, "alice", "bob")))
	for _, tc := range []struct {
		name    string
		cfg     Config
		from    []string // the remote address of each span
		user    string
		who     string // what the 429 calls the client
		another string // a user who is another client
	}{
		{"this Mac's clients without a password are one client", Config{}, []string{"127.0.0.1:50000", "127.0.0.2:50000", "[::1]:50000", "127.0.0.1:50001"}, "",
			"this Mac's clients without a password", ""},
		{"a user is one client from anywhere", Config{Web: web, BeyondLoopback: true, ProcessUsers: []string{"alice", "bob"}},
			[]string{"192.0.2.7:40000", "192.0.2.8:40000", "127.0.0.1:50000", "[2001:db8::1]:40000"}, "alice", "user alice", "bob"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Processes = processesOn(c, serverTree())
			s, _ := offline(t, c, cfg)
			h := s.Handler()
			open := func(remote, user string) *httptest.ResponseRecorder {
				req := request{"POST", "/v1/spans?pid=4242", nil}.to("127.0.0.1:10241")
				if user != "" {
					req.SetBasicAuth(user, user+"-pw")
				}
				return serveFrom(h, req, remote)
			}
			for i := range MaxProcessSpansPerClient {
				if rec := open(tc.from[i%len(tc.from)], tc.user); rec.Code != http.StatusCreated {
					t.Fatalf("span %d: %d %s", i, rec.Code, rec.Body)
				}
			}
			for _, remote := range tc.from {
				rec := open(remote, tc.user)
				if msg := errorBody(t, rec, http.StatusTooManyRequests); !strings.Contains(msg, tc.who) {
					t.Errorf("one more from %s: %q does not name %s", remote, msg, tc.who)
				}
			}
			held := MaxProcessSpansPerClient
			if tc.another != "" {
				if rec := open("192.0.2.7:40000", tc.another); rec.Code != http.StatusCreated {
					t.Errorf("another user: %d %s, want 201", rec.Code, rec.Body)
				}
				held++
			}
			if st := statusAs(t, h, tc.user); st.OpenProcessSpans != held || st.MaxProcessSpansPerClient != MaxProcessSpansPerClient {
				t.Errorf("status: %d places held, %d a client: want %d, %d", st.OpenProcessSpans, st.MaxProcessSpansPerClient, held, MaxProcessSpansPerClient)
			}
		})
	}
}

// pollTrees reads every open span's tree once.
func (s *Server) pollTrees() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.spans {
		if o.tree != nil {
			o.tree.t.Poll()
		}
	}
}

// fillProcessSpans opens every place of the MaxProcessSpans, each user
// their share in turn, and returns the first span's address.
func fillProcessSpans(t *testing.T, h http.Handler, users []string) string {
	t.Helper()
	var first string
	for i := range MaxProcessSpans {
		rec := as(h, users[i/MaxProcessSpansPerClient], "POST", "/v1/spans?pid=4242")
		if rec.Code != http.StatusCreated {
			t.Fatalf("span %d: %d %s", i, rec.Code, rec.Body)
		}
		first = cmp.Or(first, rec.Header().Get("Location"))
	}
	return first
}
