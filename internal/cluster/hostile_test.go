package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/wire"
)

// mutated is the end of a span of 10 W over the time since it opened,
// changed by f, as a node that answers it wrong.
func mutated(n **fakeNode, f func(m map[string]any)) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		b, _ := json.Marshal((*n).reading(true))
		var m map[string]any
		json.Unmarshal(b, &m)
		f(m)
		answer(w, m)
	}
}

func energy(v any) func(m map[string]any) {
	return func(m map[string]any) { m["energy_joules"].(map[string]any)["total"] = v }
}

func field(k string, v any) func(m map[string]any) {
	return func(m map[string]any) { m[k] = v }
}

// pad is an answer of more than 1 MiB, plausible but for its size.
var pad = `{"node":"mac2","interval_seconds":0.1,"pad":"` + strings.Repeat("x", 1<<20) + `"}`

// Each wrong answer a node may give to its status, to the opening of its
// span or to its end: values (negative, not a number, 1e308, huge ints,
// out of range), shapes ({}, null, [], wrong types, missing fields),
// sizes (over 1 MiB), timings (no answer, headers then silence, a
// trickle), a redirect. Each ends within exopower's limits: at the start
// the node is refused, with an error that names what was wrong; at the
// end it is lost, with a warning that does, and the total is the other
// node's alone, and writable as JSON.
func TestAHostileNodeIsRefusedOrLostAndTheTotalWrittenWithoutIt(t *testing.T) {
	t.Parallel()
	redirect := func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.1:1"+r.URL.Path, http.StatusTemporaryRedirect)
	}
	for _, c := range []struct {
		name, route string
		h           func(n **fakeNode) http.HandlerFunc
		want        string
	}{
		{"an empty status", "status", func(**fakeNode) http.HandlerFunc { return raw(`{}`) }, "node, its name, is missing"},
		{"a null status", "status", func(**fakeNode) http.HandlerFunc { return raw(`null`) }, "node, its name, is missing"},
		{"an array for a status", "status", func(**fakeNode) http.HandlerFunc { return raw(`[]`) }, "cannot unmarshal array"},
		{"a name of the wrong type", "status", func(**fakeNode) http.HandlerFunc { return raw(`{"node":5,"interval_seconds":0.1}`) }, "cannot unmarshal number"},
		{"an interval of an hour is waited for 12 s", "status", func(**fakeNode) http.HandlerFunc { return raw(`{"node":"m","interval_seconds":3600}`) }, ""},
		{"an interval of 1e12 s", "status", func(**fakeNode) http.HandlerFunc { return raw(`{"node":"m","interval_seconds":1e12}`) }, "interval_seconds 1e+12 is out of the range exopower takes, 10ms to 1h0m0s"},
		{"a negative interval", "status", func(**fakeNode) http.HandlerFunc { return raw(`{"node":"m","interval_seconds":-5}`) }, "interval_seconds -5 is out of the range"},
		{"no interval", "status", func(**fakeNode) http.HandlerFunc { return raw(`{"node":"m"}`) }, "interval_seconds 0 is out of the range"},
		{"NaN as a string", "status", func(**fakeNode) http.HandlerFunc { return raw(`{"node":"m","interval_seconds":"NaN"}`) }, "cannot unmarshal string"},
		{"a number beyond a float", "status", func(**fakeNode) http.HandlerFunc { return raw(`{"node":"m","interval_seconds":1e999}`) }, "cannot unmarshal number 1e999"},
		{"a status over 1 MiB", "status", func(**fakeNode) http.HandlerFunc { return raw(pad) }, "an answer over 1024 KiB"},
		{"a status never answered", "status", func(**fakeNode) http.HandlerFunc { return hang }, "no answer within 5s"},
		{"a status's head and then silence", "status", func(**fakeNode) http.HandlerFunc { return silent }, "no answer within 5s"},
		{"a status trickled", "status", func(**fakeNode) http.HandlerFunc { return trickle }, "no answer within 5s"},
		{"a status redirected", "status", func(**fakeNode) http.HandlerFunc { return redirect }, "307 Temporary Redirect to http://127.0.0.1:1/v1/status"},

		{"a span never opened", "open", func(**fakeNode) http.HandlerFunc { return hang }, "no answer within 2.1s"},
		{"a span opened without an id", "open", func(**fakeNode) http.HandlerFunc { return raw(`{}`) }, "id, the span's, is missing"},
		{"a span opened yesterday", "open", func(**fakeNode) http.HandlerFunc { return raw(`{"id":"s1","started_at":"yesterday"}`) }, `started_at "yesterday" is no RFC 3339 time`},
		{"a span opened elsewhere", "open", func(**fakeNode) http.HandlerFunc { return redirect }, "exopower follows no redirect"},

		{"a negative energy", "end", func(n **fakeNode) http.HandlerFunc { return mutated(n, energy(-5000)) }, "energy_joules.total -5000 is implausible: negative"},
		{"an energy of 1e308 J", "end", func(n **fakeNode) http.HandlerFunc { return mutated(n, energy(1e308)) }, "energy_joules.total 1e+308 is implausible: over 2 kW"},
		{"an energy of NaN as a string", "end", func(n **fakeNode) http.HandlerFunc { return mutated(n, energy("NaN")) }, "cannot unmarshal string"},
		{"an average beyond 2 kW", "end", func(n **fakeNode) http.HandlerFunc {
			return mutated(n, func(m map[string]any) { m["avg_power_watts"].(map[string]any)["gpu"] = 1e5 })
		}, "avg_power_watts.gpu 100000 is implausible: over 2 kW"},
		{"a system's energy below zero", "end", func(n **fakeNode) http.HandlerFunc {
			return mutated(n, func(m map[string]any) { m["energy_joules"].(map[string]any)["system"] = -1 })
		}, "energy_joules.system -1 is implausible"},
		{"an empty end", "end", func(**fakeNode) http.HandlerFunc { return raw(`{}`) }, "its measurement (started_at, duration_seconds, energy_joules...) is missing"},
		{"a null end", "end", func(**fakeNode) http.HandlerFunc { return raw(`null`) }, "its measurement"},
		{"an array for an end", "end", func(**fakeNode) http.HandlerFunc { return raw(`[]`) }, "cannot unmarshal array"},
		{"a coverage of 2", "end", func(n **fakeNode) http.HandlerFunc { return mutated(n, field("coverage", 2)) }, "coverage 2 is outside [0, 1]"},
		{"negative samples", "end", func(n **fakeNode) http.HandlerFunc { return mutated(n, field("samples", -3)) }, "samples -3 is implausible"},
		{"samples beyond an int", "end", func(n **fakeNode) http.HandlerFunc {
			return mutated(n, field("samples", json.Number("1"+strings.Repeat("0", 30))))
		}, "cannot unmarshal number"},
		{"a negative duration", "end", func(n **fakeNode) http.HandlerFunc { return mutated(n, field("duration_seconds", -1)) }, "duration_seconds -1 is implausible"},
		{"a day's span in a moment", "end", func(n **fakeNode) http.HandlerFunc {
			return mutated(n, func(m map[string]any) { m["duration_seconds"] = 86400; energy(864e3)(m) })
		}, "duration_seconds 86400 is longer than the span has lasted"},
		{"no end time", "end", func(n **fakeNode) http.HandlerFunc {
			return mutated(n, func(m map[string]any) { delete(m, "ended_at") })
		}, "ended_at is missing"},
		{"another schema", "end", func(n **fakeNode) http.HandlerFunc { return mutated(n, field("schema_version", 2)) }, "schema_version 2, where this exopower reads 1"},
		{"an interval of 1e12 s in the span", "end", func(n **fakeNode) http.HandlerFunc { return mutated(n, field("interval_seconds", 1e12)) }, "interval_seconds 1e+12 is out of the range"},
		{"an end over 1 MiB", "end", func(**fakeNode) http.HandlerFunc { return raw(pad) }, "an answer over 1024 KiB"},
		{"an end never answered", "end", func(**fakeNode) http.HandlerFunc { return hang }, "no answer within 2.1s (its interval, at most 10s, and 2s)"},
		{"an end's head and then silence", "end", func(**fakeNode) http.HandlerFunc { return silent }, "no answer within 2.1s"},
		{"an end trickled", "end", func(**fakeNode) http.HandlerFunc { return trickle }, "no answer within 2.1s"},
		{"an end redirected", "end", func(**fakeNode) http.HandlerFunc { return redirect }, "exopower follows no redirect"},
		{"an error with escapes in it", "end", func(**fakeNode) http.HandlerFunc {
			return func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(http.StatusInternalServerError)
				w.Write([]byte(`{"error":"boom\u001b[2J"}`))
			}
		}, `500 Internal Server Error: boom\x1b[2J`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var n *fakeNode
			n = newFakeNode(t, map[string]http.HandlerFunc{c.route: c.h(&n)})
			r, err := n.connect(t)
			if c.route == "status" {
				switch {
				case c.want == "" && (err != nil || r.wait != MaxWindowWait+EndSlack):
					t.Errorf("Connect = %v; want the node, waited for %v at most", err, MaxWindowWait+EndSlack)
				case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
					t.Errorf("Connect = %v; want an error with %q", err, c.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			err = r.Begin(context.Background())
			if c.route == "open" {
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Errorf("Begin = %v; want an error with %q", err, c.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			good := newFakeNode(t, nil).mustBegin(t)
			start := time.Now()
			nodes := EndAll(context.Background(), []Member{good, r}, time.Now())
			if nodes[0].Lost || !nodes[1].Lost {
				t.Fatalf("lost: %v, %v; want the second node alone", nodes[0].Lost, nodes[1].Lost)
			}
			if all := strings.Join(nodes[1].Warnings, "\n"); !strings.Contains(all, c.want) {
				t.Errorf("warnings %q: no %q", nodes[1].Warnings, c.want)
			}
			sum := Total(nodes, nil, start, time.Since(start))
			if _, err := json.Marshal(sum); err != nil {
				t.Errorf("the total cannot be written: %v", err)
			}
			if sum.EnergyJoules.Total != nodes[0].EnergyJoules.Total || !(sum.EnergyJoules.Total > 0) {
				t.Errorf("total %v J, want the good node's %v J", sum.EnergyJoules.Total, nodes[0].EnergyJoules.Total)
			}
			for _, w := range sum.Warnings {
				noControl(t, "a warning", w)
			}
		})
	}
}

// A span's answer may hold fields that a span's never does (rows of
// nodes, a command, a bound): they are dropped, not slipped into the
// summary.
func TestANodesSpanCannotSlipRowsIntoTheSummary(t *testing.T) {
	var n *fakeNode
	n = newFakeNode(t, map[string]http.HandlerFunc{"end": mutated(&n, func(m map[string]any) {
		m["nodes"] = []any{map[string]any{"node": "ghost", "energy_joules": map[string]any{"total": 1e6}}}
		m["uncertainty_joules"] = 0
		m["command"] = []string{"rm", "-rf", "/"}
	})})
	ns := n.mustBegin(t).End(context.Background(), time.Now())
	if ns.Lost || ns.Nodes != nil || ns.UncertaintyJoules != nil || ns.Command != nil {
		t.Errorf("node %+v: want its span alone", ns.Summary)
	}
}

// A node that redirects is refused with the place it points to, and
// nothing goes there: not the request, not its credentials (from https
// to plain http, or to another port of the same host).
func TestANodeThatRedirectsIsRefusedAndItsCredentialsGoNowhereElse(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		answer(w, wire.Status{Node: "other", IntervalSeconds: 0.1})
	}))
	defer other.Close()
	for _, code := range []int{http.StatusMovedPermanently, http.StatusTemporaryRedirect} {
		node := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+r.URL.Path, code)
		}))
		ts, _ := ParseTargets([]string{node.URL}, nil)
		auth, _ := LoadAuth(strings.NewReader(node.URL+" ops s3cret\n"), func(string) string { return "" })
		tlsConf, _ := TLSConfig("")
		tlsConf.InsecureSkipVerify = true // the test's own certificate
		_, err := Connect(context.Background(), NewClient(ts[0], auth, tlsConf))
		want := fmt.Sprintf("%d %s to %s/v1/status", code, http.StatusText(code), other.URL)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "give that URL with --node") {
			t.Errorf("%d: %v; want an error with %q and what to do", code, err, want)
		}
		node.Close()
	}
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("%d requests went where the node pointed", n)
	}
}

// Every string a node supplies (its name, its warnings, its source, the
// words of its errors) reaches the user with its control characters
// made visible: an OSC that sets the terminal's title, a clear screen, a
// \r that draws over a line show as escapes and do nothing.
func TestTextANodeSuppliesHasItsControlCharactersEscaped(t *testing.T) {
	evil := "mac\x1b]0;owned\x07\r\x1b[2J\u009b1m\x7f\u202e\u2066"
	n := newFakeNode(t, map[string]http.HandlerFunc{
		"status": func(w http.ResponseWriter, _ *http.Request) {
			answer(w, wire.Status{Node: evil, IntervalSeconds: 0.1, Source: wire.Source{Tool: evil}})
		},
	})
	n.set("end", mutated(&n, func(m map[string]any) {
		m["warnings"] = []string{"hot\x1b[31m", evil}
		m["source"] = map[string]any{"tool": evil, "hw_model": "\r", "os_build": "\x00"}
		m["scope"] = evil
	}))
	r := n.mustBegin(t)
	want := `mac\x1b]0;owned\x07\x0d\x1b[2J\u009b1m\x7f\u202e\u2066`
	if r.Name() != want {
		t.Errorf("name %q, want %q", r.Name(), want)
	}
	ns := r.End(context.Background(), time.Now())
	sum := Total([]wire.NodeSummary{ns}, nil, time.Now(), time.Second)
	for _, s := range append(append([]string{ns.Node, ns.Scope, ns.Source.Tool, ns.Source.HWModel, ns.Source.OSBuild, sum.Source.Tool}, ns.Warnings...), sum.Warnings...) {
		noControl(t, "a node's text", s)
	}
	if !strings.Contains(strings.Join(sum.Warnings, "\n"), `node `+want+`: hot\x1b[31m`) {
		t.Errorf("warnings %q: want the node's, escaped", sum.Warnings)
	}
}

// A node lost mid-run covered, of the run, what its last reading covered:
// its coverage is that over the span's length, and the total's, the
// lowest node's, shows it.
func TestALostNodesCoverageIsWhatItCoveredOfTheSpan(t *testing.T) {
	n := newFakeNode(t, map[string]http.HandlerFunc{"end": func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}})
	r := n.mustBegin(t)
	last := awaitReading(t, r) // the span read once, a second in
	covered := float64(last.DurationSeconds) * float64(last.Coverage)
	at := r.began.Add(4 * time.Second) // the command ran for 4 s
	ns := r.End(context.Background(), at)
	if want := covered / 4; !ns.Lost || math.Abs(float64(ns.Coverage)-want) > 1e-9 {
		t.Errorf("lost %v, coverage %v; want lost, and %v", ns.Lost, ns.Coverage, want)
	}
	good := wire.NodeSummary{Summary: &wire.Summary{Coverage: 1}, Node: "good"}
	if sum := Total([]wire.NodeSummary{good, ns}, nil, r.began, 4*time.Second); sum.Coverage != ns.Coverage {
		t.Errorf("total coverage %v, want the lost node's %v", sum.Coverage, ns.Coverage)
	}
}

// The end of a span gives up the reading in flight at once: a node that
// stopped answering costs the end of its span's wait, not that and the
// reading's before it.
func TestTheEndOfASpanDoesNotWaitForTheReadingInFlight(t *testing.T) {
	n := newFakeNode(t, map[string]http.HandlerFunc{"read": hang})
	r := n.mustBegin(t)
	<-n.reads // a reading in flight, which the node will never answer
	t0 := time.Now()
	ns := r.End(context.Background(), time.Now())
	// The reading would be given up after StatusWait: the end came
	// long before, the one wait its own answer.
	if took := time.Since(t0); ns.Lost || took >= StatusWait {
		t.Errorf("lost %v after %v; want the end's answer, before the reading in flight is given up (%v)", ns.Lost, took, StatusWait)
	}
}

// A node that skipped for answering as no serve does is named so in the
// summary, not as one that did not answer.
func TestASkippedNodeIsNamedWithWhy(t *testing.T) {
	sum := Total(nil, []Skipped{
		{Node: "http://a:1", Err: errors.New("connection refused")},
		{Node: "http://b:1", Err: notServe("GET /v1/status", errors.New("interval_seconds 1e+12 is out of the range exopower takes, 10ms to 1h0m0s"))},
	}, time.Now(), time.Second)
	all := strings.Join(sum.Warnings, "\n")
	for _, want := range []string{
		"node http://a:1 did not answer before the start and is not measured (--skip-unreachable)",
		"node http://b:1 answered as no exopower serve does (GET /v1/status: not exopower serve's answer: interval_seconds 1e+12 is out of the range",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings %q: no %q", sum.Warnings, want)
		}
	}
}

// awaitReading waits for r's first reading of its span, for at most a
// minute.
func awaitReading(t *testing.T, r *Remote) *wire.Reading {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		r.mu.Lock()
		last := r.last
		r.mu.Unlock()
		if last != nil {
			return last
		}
	}
	t.Fatal("no reading of the span a minute on")
	return nil
}

// A bad node (an interval of 1e12 s) stops the run before anything
// starts, naming the value; --skip-unreachable goes on without it, and
// says why it was left out.
func TestABadNodeIsRefusedAtTheStartOrSkipped(t *testing.T) {
	good := newFakeNode(t, nil)
	bad := newFakeNode(t, map[string]http.HandlerFunc{"status": raw(`{"node":"bad","interval_seconds":1e12}`)})
	setup := Setup{Nodes: Nodes{URLs: []string{good.srv.URL, bad.srv.URL}}, Getenv: func(string) string { return "" }}
	if _, _, err := setup.Connect(context.Background()); err == nil || !strings.Contains(err.Error(), "node "+bad.srv.URL+": GET /v1/status: not exopower serve's answer: interval_seconds 1e+12 is out of the range") {
		t.Errorf("Connect = %v; want the bad node refused, naming its interval", err)
	}
	setup.SkipUnreachable = true
	members, skipped, err := setup.Connect(context.Background())
	if err != nil || len(members) != 1 || len(skipped) != 1 || skipped[0].Node != bad.srv.URL || !errors.Is(skipped[0].Err, ErrNotServe) {
		t.Fatalf("Connect = %d members, skipped %+v, %v; want the bad node skipped as no serve", len(members), skipped, err)
	}
	CloseAll(members)
	if all := strings.Join(Total(nil, skipped, time.Now(), time.Second).Warnings, "\n"); !strings.Contains(all, "node "+bad.srv.URL+" answered as no exopower serve does") {
		t.Errorf("warnings %q", all)
	}
}
