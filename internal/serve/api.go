package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/exopower/exopower/internal/output"
	"github.com/exopower/exopower/internal/power"
	"github.com/exopower/exopower/internal/safe"
	"github.com/exopower/exopower/internal/sampler"
	"github.com/exopower/exopower/internal/wire"
)

// Handler returns the HTTP API: /metrics, /v1/status and the spans, behind
// the web config's passwords and the checks of Host (gate).
func (s *Server) Handler() http.Handler {
	metrics := promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{EnableOpenMetrics: true})
	return s.gate(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		answerRead(r)
		s.requests.Add(1)
		r.Body = http.MaxBytesReader(w, r.Body, MaxBody)
		path := r.URL.Path
		switch {
		case path == "/metrics":
			only(w, r, http.MethodGet, metrics.ServeHTTP)
		case path == "/v1/status":
			only(w, r, http.MethodGet, s.status)
		case path == "/v1/windows":
			only(w, r, http.MethodGet, s.guard(s.windows))
		case path == "/v1/spans":
			only(w, r, http.MethodPost, s.guard(s.open))
		case strings.HasPrefix(path, "/v1/spans/"):
			id, tail, _ := strings.Cut(strings.TrimPrefix(path, "/v1/spans/"), "/")
			switch {
			case id != "" && tail == "" && !strings.Contains(path, "//"):
				only(w, r, http.MethodGet, s.guard(func(w http.ResponseWriter, r *http.Request) { s.read(w, id) }))
			case id != "" && tail == "end":
				only(w, r, http.MethodPost, s.guard(func(w http.ResponseWriter, r *http.Request) { s.end(w, r, id) }))
			default:
				fail(w, http.StatusNotFound, "no such endpoint: "+path)
			}
		default:
			fail(w, http.StatusNotFound, "no such endpoint: "+path+" (there are /metrics, /v1/status, /v1/windows and /v1/spans)")
		}
	}))
}

// only serves r with h when it uses method, and says 405 otherwise.
func only(w http.ResponseWriter, r *http.Request, method string, h http.HandlerFunc) {
	if r.Method != method {
		w.Header().Set("Allow", method)
		fail(w, http.StatusMethodNotAllowed, fmt.Sprintf("%s %s: use %s", r.Method, r.URL.Path, method))
		return
	}
	h(w, r)
}

// guard lets a client open, read and end spans, and stream the windows,
// only from this machine, unless it gave the password of a user of the
// web config with the span role, and never from a web page of another
// origin; it also refuses a body larger than MaxBody (no request needs
// one).
func (s *Server) guard(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if why := s.crossOrigin(r); why != "" {
			fail(w, http.StatusForbidden, why)
			return
		}
		if !authenticated(r) && !loopback(r) {
			fail(w, http.StatusForbidden, "spans are served to this machine only, unless the web config (--web.config.file) sets basic_auth_users")
			return
		}
		if why := s.refuseSpans(r); why != "" {
			fail(w, http.StatusForbidden, why)
			return
		}
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			var mb *http.MaxBytesError
			if errors.As(err, &mb) {
				fail(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("a request body is at most %d bytes; none is needed", MaxBody))
				return
			}
			fail(w, http.StatusBadRequest, "reading the request: "+err.Error())
			return
		}
		h(w, r)
	}
}

// reserve takes a place among the MaxOpenSpans for a span being opened
// (counted by n: &s.pending) or a stream (&s.streams), or answers 429
// and reports false.
func (s *Server) reserve(w http.ResponseWriter, n *int) bool {
	s.mu.Lock()
	full := len(s.spans)+s.pending+s.streams >= MaxOpenSpans
	if !full {
		*n++
	}
	s.mu.Unlock()
	if full {
		// Answered without the lock: a slow client holds no one else up.
		tooMany(w)
	}
	return !full
}

func (s *Server) open(w http.ResponseWriter, r *http.Request) {
	if !s.reserve(w, &s.pending) {
		return
	}
	// What the span names, if it names anything, is checked first: a
	// process that cannot be read, or an app that cannot be measured, is
	// refused before a span is open.
	tr, app, err := s.named(r)
	if err != nil {
		s.mu.Lock()
		s.pending--
		s.mu.Unlock()
		var te *treeError
		errors.As(err, &te)
		fail(w, te.code, te.msg)
		return
	}
	// Begin asks powermetrics for a sample and waits for it, so that a
	// window ends where the span starts.
	s.cfg.Wall.Mark()
	sp := s.meter.Begin(r.Context(), nil)
	o := &openSpan{id: newID(), span: sp, started: sp.Start, tree: tr, app: s.openApp(app, sp.Start)}
	gone := r.Context().Err() != nil || clientLeft(r)
	s.mu.Lock()
	s.pending--
	if !gone {
		s.spans[o.id] = o
	}
	s.mu.Unlock()
	if gone {
		// The client will never learn the id: a span kept for it would
		// count against the limit for a day.
		s.meter.End(r.Context(), sp, sp.Start)
		tr.stop()
		s.closeApp(o.app)
		return
	}
	s.opened.Add(1)
	watchAnswer(r, func() { s.forget(o.id) })
	if r.Context().Err() != nil || clientLeft(r) {
		// It went while the span was kept: a close that came within a
		// round trip of the answer, which the watch, set only now,
		// would not see.
		s.forget(o.id)
		return
	}
	w.Header().Set("Location", "/v1/spans/"+o.id)
	reply(w, http.StatusCreated, wire.Opened{ID: o.id, Node: s.cfg.Node, StartedAt: stamp(o.started), URL: "/v1/spans/" + o.id})
}

// named is what r's span names: the tree of its ?pid=, nil for none, and
// the app of its ?app=, "" for none; or why it may not be opened.
func (s *Server) named(r *http.Request) (*tree, string, error) {
	// A query that cannot be read whole, or that names what a span does
	// not take, is refused: Go's reading drops a pair it cannot parse
	// (app=Safari;x) and ignores names it does not know (APP=Safari),
	// and the client that asked for an app's energy would get a span
	// without it, and not be told.
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, "", &treeError{http.StatusBadRequest, "the query cannot be read: " + safe.Text(err.Error()) + ": a span takes ?pid=N and ?app=NAME, encoded as URLs encode them"}
	}
	for k := range q {
		if k != "pid" && k != "app" {
			return nil, "", &treeError{http.StatusBadRequest, fmt.Sprintf("%s=: a span takes ?pid=N and ?app=NAME, and nothing else", safe.Text(k))}
		}
	}
	app, err := s.appNamed(r)
	if err != nil {
		return nil, "", err
	}
	tr, err := s.openTree(r)
	return tr, app, err
}

// forget ends the span id, whose client went without its answer, if it
// is open: nobody knows its id.
func (s *Server) forget(id string) {
	s.mu.Lock()
	o := s.spans[id]
	delete(s.spans, id)
	s.mu.Unlock()
	if o != nil {
		s.drop(o)
	}
}

// tooMany refuses one more span or stream: both hold a span open.
func tooMany(w http.ResponseWriter) {
	fail(w, http.StatusTooManyRequests, fmt.Sprintf("%d spans and streams of windows are open, the most there may be; end some (a span left open expires after %v)", MaxOpenSpans, SpanTTL))
}

func (s *Server) reading(ctx context.Context, o *openSpan, r sampler.Result, ended *time.Time) wire.Reading {
	sum := output.NewSummary(r, o.started, s.cfg.Interval)
	sum.Type = "span"
	var warnings []string
	sum.Attribution, warnings = o.tree.attribution(r, ended != nil)
	sum.Warnings = append(sum.Warnings, warnings...)
	sum.App, warnings = s.appReading(ctx, o, ended)
	sum.Warnings = append(sum.Warnings, warnings...)
	sum.Wall, warnings = s.wallOf(ctx, o, ended)
	sum.Warnings = append(sum.Warnings, warnings...)
	s.addWallEstimate(sum)
	sr := wire.Reading{Summary: sum, ID: o.id, Node: s.cfg.Node, Open: ended == nil}
	if ended != nil {
		e := stamp(*ended)
		sr.EndedAt = &e
	}
	return sr
}

func (s *Server) read(w http.ResponseWriter, id string) {
	s.mu.Lock()
	o := s.spans[id]
	s.mu.Unlock()
	if o == nil {
		fail(w, http.StatusNotFound, "no open span "+id+" (ended, expired, or never opened)")
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.final != nil {
		reply(w, http.StatusOK, o.final)
		return
	}
	s.mu.Lock()
	ended := s.spans[id] != o
	s.mu.Unlock()
	if ended {
		// An end took it while this waited for its lock: it is no
		// longer open, and its tree is read no more.
		fail(w, http.StatusNotFound, "no open span "+id+" (ended, expired, or never opened)")
		return
	}
	reply(w, http.StatusOK, s.reading(context.Background(), o, s.meter.Read(o.span), nil))
}

func (s *Server) end(w http.ResponseWriter, r *http.Request, id string) {
	s.mu.Lock()
	o := s.spans[id]
	delete(s.spans, id)
	s.mu.Unlock()
	if o == nil {
		fail(w, http.StatusNotFound, "no open span "+id+" (ended, expired, or never opened)")
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	s.ended.Add(1)
	if o.final != nil {
		reply(w, http.StatusOK, o.final) // serve ended it, its tree gone
		return
	}
	end := s.cfg.Now()
	// The plug is asked for a reading now, beside the window's wait
	// below, so that one holds the end.
	s.cfg.Wall.Mark()
	// End asks for a sample and waits for the window that covers the end:
	// at most an interval and the grace. A client that goes away cuts the
	// wait short; the span is closed all the same.
	res := s.meter.End(r.Context(), o.span, end)
	reply(w, http.StatusOK, s.reading(r.Context(), o, res, &end))
}

func (s *Server) status(w http.ResponseWriter, _ *http.Request) {
	t := s.meter.Totals()
	restarts, rerr := s.src.Restarts()
	s.mu.Lock()
	open, streams, trees := len(s.spans), s.streams, s.trees
	s.mu.Unlock()
	st := wire.Status{
		Node:                     s.cfg.Node,
		InstanceID:               s.instance,
		Source:                   wire.Source{Tool: t.Source, HWModel: t.HWModel, OSBuild: t.OSBuild},
		IntervalSeconds:          wire.Num(s.cfg.Interval.Seconds()),
		StartedAt:                stamp(s.started),
		UptimeSeconds:            wire.Num(s.cfg.Now().Sub(s.started).Seconds()),
		EnergyJoules:             wire.NewComponents(t.Energy, t.Has),
		CoveredSeconds:           wire.Num(t.Covered.Seconds()),
		Samples:                  t.Windows,
		SampleErrors:             t.Refused,
		Restarts:                 restarts,
		OpenSpans:                open,
		OpenStreams:              streams,
		OpenProcessSpans:         trees,
		MaxProcessSpans:          MaxProcessSpans,
		MaxProcessSpansPerClient: MaxProcessSpansPerClient,
		Rails:                    wire.NewRails(t.Health),
		StillNowSeconds:          map[string]wire.Num{},
		Wall:                     s.wallStatus(),
		WallEstimated:            s.estimatedStatus(&t),
	}
	for r, d := range t.Stood {
		st.StillNowSeconds[power.Rail(r).Label()] = wire.Num(d.Seconds())
	}
	if st.SampleErrors == nil {
		st.SampleErrors = map[string]int{}
	}
	if rerr != nil {
		e := rerr.Error()
		st.RestartError = &e
	}
	if s.cfg.Boot != "" {
		b := s.cfg.Boot
		st.BootID = &b
	}
	if t.Windows > 0 {
		st.LastWindow = &wire.LastWindow{Start: stamp(t.Last.Start), End: stamp(t.Last.End), PowerWatts: wire.NewComponents(t.Last.Power, t.Last.Has)}
	}
	reply(w, http.StatusOK, st)
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func reply(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		fail(w, http.StatusInternalServerError, "encoding the answer: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(append(b, '\n'))
}

// fail answers code with msg in JSON, and closes the connection after
// it: no client keeps a connection, and with it one of the
// --web.max-connections, by being refused (a 401 kept it open for
// another try), and a client that was served something else opens
// another. Over HTTP/2, net/http sends GOAWAY for it.
func fail(w http.ResponseWriter, code int, msg string) {
	b, _ := json.Marshal(wire.Error{Error: msg, Status: code})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Connection", "close")
	w.WriteHeader(code)
	w.Write(append(b, '\n'))
}
