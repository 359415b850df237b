package cluster

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/exopower/exopower/internal/wire"
)

// fakeNode is an exopower serve as the tests play it: it answers as serve
// does (a node of 10 W at 100 ms), unless a test puts a handler of its
// own for one of the routes: "status", "open", "read", "end", "windows".
type fakeNode struct {
	srv *httptest.Server
	mu  sync.Mutex
	own map[string]http.HandlerFunc
	// opened is the span's start; reads counts the reads of it.
	opened time.Time
	reads  chan struct{}
}

func newFakeNode(t *testing.T, own map[string]http.HandlerFunc) *fakeNode {
	t.Helper()
	n := &fakeNode{own: own, reads: make(chan struct{}, 100)}
	if n.own == nil {
		n.own = map[string]http.HandlerFunc{}
	}
	mux := http.NewServeMux()
	route := func(pattern, name string, h http.HandlerFunc) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			n.mu.Lock()
			own := n.own[name]
			n.mu.Unlock()
			if name == "read" {
				n.reads <- struct{}{}
			}
			if own != nil {
				own(w, r)
				return
			}
			h(w, r)
		})
	}
	route("GET /v1/status", "status", func(w http.ResponseWriter, _ *http.Request) {
		answer(w, wire.Status{Node: "mac2", IntervalSeconds: 0.1, Source: wire.Source{Tool: "powermetrics"}})
	})
	route("POST /v1/spans", "open", func(w http.ResponseWriter, _ *http.Request) {
		n.mu.Lock()
		n.opened = time.Now()
		n.mu.Unlock()
		answer(w, wire.Opened{ID: "s1", Node: "mac2", StartedAt: n.opened.UTC().Format(time.RFC3339Nano), URL: "/v1/spans/s1"})
	})
	route("GET /v1/spans/{id}", "read", func(w http.ResponseWriter, _ *http.Request) { answer(w, n.reading(false)) })
	route("POST /v1/spans/{id}/end", "end", func(w http.ResponseWriter, _ *http.Request) { answer(w, n.reading(true)) })
	route("GET /v1/windows", "windows", func(w http.ResponseWriter, r *http.Request) { streamLines(w, r, -1) })
	n.srv = httptest.NewServer(mux)
	t.Cleanup(n.srv.Close)
	return n
}

// set puts h for route, from now on.
func (n *fakeNode) set(route string, h http.HandlerFunc) {
	n.mu.Lock()
	n.own[route] = h
	n.mu.Unlock()
}

// reading is the span's reading now: 10 W since it opened.
func (n *fakeNode) reading(ended bool) wire.Reading {
	n.mu.Lock()
	opened := n.opened
	n.mu.Unlock()
	return goodReading(opened, time.Since(opened), ended)
}

// goodReading is a reading of a span of 10 W that started at start and
// has lasted d.
func goodReading(start time.Time, d time.Duration, ended bool) wire.Reading {
	secs := d.Seconds()
	sum := &wire.Summary{SchemaVersion: 1, Type: "span", StartedAt: start.UTC().Format(time.RFC3339Nano),
		DurationSeconds: wire.Num(secs), IntervalSeconds: 0.1, Samples: int(secs * 10), Coverage: 1, Scope: "soc",
		Source:         wire.Source{Tool: "powermetrics", HWModel: "Mac14,6"},
		EnergyJoules:   wire.Components{Total: wire.Num(10 * secs), CPU: wire.Num(10 * secs)},
		AvgPowerWatts:  wire.Components{Total: 10, CPU: 10},
		PeakPowerWatts: wire.Components{Total: 10, CPU: 10}, Warnings: []string{}}
	r := wire.Reading{Summary: sum, ID: "s1", Node: "mac2", Open: !ended}
	if ended {
		e := start.Add(d).UTC().Format(time.RFC3339Nano)
		r.EndedAt = &e
	}
	return r
}

// goodLine is the line of a window of 10 W at at, n windows into the
// stream.
func goodLine(at time.Time, n int) wire.SampleLine {
	e := wire.Num(float64(n))
	return wire.SampleLine{SchemaVersion: 1, Type: "sample", Time: at.UTC().Format(time.RFC3339Nano), WindowSeconds: 0.1,
		PowerWatts: wire.Components{Total: 10, CPU: 10}, EnergyJoules: wire.Components{Total: e, CPU: e}, ThermalPressure: "Nominal", Node: "mac2"}
}

// streamLines streams a window's line every 10 ms, as serve does (but
// faster): count of them and then the end of the stream, or until the
// client goes when count < 0.
func streamLines(w http.ResponseWriter, r *http.Request, count int) {
	w.Header().Set("Content-Type", "application/x-ndjson")
	rc := http.NewResponseController(w)
	enc := json.NewEncoder(w)
	for i := 1; count < 0 || i <= count; i++ {
		select {
		case <-r.Context().Done():
			return
		case <-time.After(10 * time.Millisecond):
		}
		if enc.Encode(goodLine(time.Now(), i)) != nil || rc.Flush() != nil {
			return
		}
	}
}

func answer(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// raw answers with body as it is.
func raw(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(body))
	}
}

// hang answers nothing until the client goes.
func hang(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }

// silent sends the head of an answer, then nothing until the client goes.
func silent(w http.ResponseWriter, r *http.Request) {
	w.WriteHeader(http.StatusOK)
	http.NewResponseController(w).Flush()
	<-r.Context().Done()
}

// trickle sends a byte of a plausible answer every 50 ms, forever.
func trickle(w http.ResponseWriter, r *http.Request) {
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	for {
		if _, err := w.Write([]byte(" ")); err != nil || rc.Flush() != nil {
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// connect reaches the fake node as Setup would.
func (n *fakeNode) connect(t *testing.T) (*Remote, error) {
	t.Helper()
	ts, err := ParseTargets([]string{n.srv.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return Connect(context.Background(), NewClient(ts[0], Auth{}, nil))
}

// mustConnect reaches the node and opens its span.
func (n *fakeNode) mustBegin(t *testing.T) *Remote {
	t.Helper()
	r, err := n.connect(t)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Begin(context.Background()); err != nil {
		t.Fatal(err)
	}
	return r
}

// noControl fails t when s holds a control character.
func noControl(t *testing.T, what, s string) {
	t.Helper()
	control := func(r rune) bool {
		return unicode.IsControl(r) || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
	}
	if i := strings.IndexFunc(s, control); i >= 0 {
		t.Errorf("%s holds control character %q at %d: %q", what, s[i], i, s)
	}
}
