package cluster

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/wire"
)

// quickRetries makes the reconnections of a stream quick for a test.
func quickRetries(t *testing.T) {
	first, tries := retryFirst, retryTries
	retryFirst, retryTries = time.Millisecond, 3
	t.Cleanup(func() { retryFirst, retryTries = first, tries })
}

// streamed is what a stream handed over: its lines and its notes.
type streamed struct {
	mu    sync.Mutex
	lines []wire.SampleLine
	notes []StreamNote
	// wanted is closed once the stream has handed over what until says.
	wanted chan struct{}
	once   sync.Once
	until  func(*streamed) bool
}

func (s *streamed) line(l wire.SampleLine) { s.add(func() { s.lines = append(s.lines, l) }) }
func (s *streamed) note(n StreamNote)      { s.add(func() { s.notes = append(s.notes, n) }) }

func (s *streamed) add(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f()
	if s.until(s) {
		s.once.Do(func() { close(s.wanted) })
	}
}

func (s *streamed) states() []StreamState {
	var out []StreamState
	for _, n := range s.notes {
		out = append(out, n.State)
	}
	return out
}

// stream streams r's windows until the stream has handed over what until
// says (or is over), and returns what it handed over.
func stream(t *testing.T, r *Remote, until func(*streamed) bool) *streamed {
	t.Helper()
	s := &streamed{wanted: make(chan struct{}), until: until}
	ctx, cancel := context.WithCancel(context.Background())
	over, wait := StreamAll(ctx, []Member{r}, func(_ int, l wire.SampleLine) { s.line(l) }, func(_ int, n StreamNote) { s.note(n) })
	select {
	case <-s.wanted:
	case <-over:
	}
	cancel()
	wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s
}

// A stream that the node ends (its serve restarted) is opened again: the
// user is told that it broke and that it is back, and the energy stays
// cumulative across the break.
func TestAStreamThatEndsIsOpenedAgainAndTheUserTold(t *testing.T) {
	quickRetries(t)
	var conns atomic.Int32
	n := newFakeNode(t, map[string]http.HandlerFunc{"windows": func(w http.ResponseWriter, r *http.Request) {
		if conns.Add(1) == 1 {
			streamLines(w, r, 3) // and then the stream ends
			return
		}
		streamLines(w, r, -1)
	}})
	r, err := n.connect(t)
	if err != nil {
		t.Fatal(err)
	}
	s := stream(t, r, func(s *streamed) bool { return len(s.lines) >= 5 })
	if st := s.states(); len(st) != 2 || st[0] != StreamBroke || st[1] != StreamBack {
		t.Fatalf("notes %+v: want broke, then back", s.notes)
	}
	for _, want := range []string{"node mac2 (" + n.srv.URL + "): its stream of windows broke (the node ended it); reconnecting", "is back after"} {
		if !strings.Contains(s.notes[0].Text+s.notes[1].Text, want) {
			t.Errorf("notes %+v: no %q", s.notes, want)
		}
	}
	// The first stream ended at 3 J; the second starts from there.
	if e := []wire.Num{s.lines[2].EnergyJoules.Total, s.lines[3].EnergyJoules.Total, s.lines[4].EnergyJoules.Total}; e[0] != 3 || e[1] != 4 || e[2] != 5 {
		t.Errorf("energy %v J across the break, want 3, 4, 5", e)
	}
}

// A stream that breaks in every way a node can break it is an error that
// names the node and what was wrong, told to the user; one that does not
// come back is given up, and the user told that too.
func TestAStreamThatBreaksIsToldOfAndGivenUpWhenItDoesNotComeBack(t *testing.T) {
	quickRetries(t)
	long := strings.Repeat("x", 70<<10)
	for _, c := range []struct {
		name string
		h    http.HandlerFunc
		want string
	}{
		{"a line over 64 KiB", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(`{"pad":"` + long + `"}` + "\n")) },
			"GET /v1/windows: not exopower serve's answer: a line over 64 KiB"},
		{"a line of 1e308 J", func(w http.ResponseWriter, _ *http.Request) {
			w.Write([]byte(`{"schema_version":1,"type":"sample","time":"2026-12-03T10:00:00Z","window_seconds":0.1,"power_watts":{"total":10},"energy_joules":{"total":1e308}}` + "\n"))
		}, "energy_joules.total 1e+308 is implausible"},
		{"a line of negative power", func(w http.ResponseWriter, _ *http.Request) {
			w.Write([]byte(`{"schema_version":1,"type":"sample","time":"2026-12-03T10:00:00Z","window_seconds":0.1,"power_watts":{"total":-1},"energy_joules":{"total":1}}` + "\n"))
		}, "power_watts.total -1 is implausible"},
		{"a line that is no JSON", raw("<html>\n"), "not exopower serve's answer: invalid character"},
		{"a line of another type", raw(`{"schema_version":1,"type":"summary"}` + "\n"), `type "summary", where a window's is "sample"`},
		{"no stream at all", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNotFound) }, "GET /v1/windows: 404 Not Found"},
		{"a stream's head and then silence", silent, "GET /v1/windows: no window within 50ms"},
		{"no head", hang, "GET /v1/windows: no answer within 50ms"},
		{"a redirect", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://127.0.0.1:1/", http.StatusFound)
		}, "exopower follows no redirect"},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := newFakeNode(t, map[string]http.HandlerFunc{"windows": c.h})
			r, err := n.connect(t)
			if err != nil {
				t.Fatal(err)
			}
			r.wait, r.silence = 50*time.Millisecond, 50*time.Millisecond
			s := stream(t, r, func(*streamed) bool { return false }) // until it is given up
			if st := s.states(); len(st) != 2 || st[0] != StreamBroke || st[1] != StreamGone {
				t.Fatalf("notes %+v: want broke, then gone", s.notes)
			}
			name := "node mac2 (" + n.srv.URL + ")"
			if !strings.HasPrefix(s.notes[0].Text, name) || !strings.Contains(s.notes[0].Text, c.want) {
				t.Errorf("note %q: want it to name %s and say %q", s.notes[0].Text, name, c.want)
			}
			if !strings.Contains(s.notes[1].Text, "did not come back in 3 tries") || len(s.lines) != 0 {
				t.Errorf("note %q, %d lines: want it given up, no line shown", s.notes[1].Text, len(s.lines))
			}
		})
	}
}
