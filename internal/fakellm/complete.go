package fakellm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"
)

// complete answers a chat (chat true) or text completion request, whose
// Seen is at index i.
func (s *Server) complete(w http.ResponseWriter, r *http.Request, i int, chat bool) {
	f := s.faultOf()
	if s.misbehave(w, r, f) {
		return
	}
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	req, prompt, err := parseRequest(body, chat)
	n, capped := req.limit(s.c.Tokens)
	s.update(i, func(x *Seen) {
		x.Model, x.Stream, x.Temperature, x.Seed = req.Model, req.Stream, req.Temperature, req.Seed
		x.MaxTokens, x.MaxCompletionTokens, x.IncludeUsage = req.MaxTokens, req.MaxCompletionTokens, req.includeUsage()
		x.PromptTokens = prompt
	})
	var bad badRequest
	switch {
	case errors.As(err, &bad):
		writeError(w, http.StatusBadRequest, bad.msg, "invalid_request_error", "")
		return
	case len(s.c.Models) > 0 && !slices.Contains(s.c.Models, req.Model):
		writeError(w, http.StatusNotFound, fmt.Sprintf("The model `%s` does not exist.", req.Model), "invalid_request_error", "model_not_found")
		return
	}
	a, err := s.schedule(i, req, chat, prompt, n, capped, f)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error(), "server_error", "")
		return
	}
	if req.Stream {
		s.stream(w, r, i, a)
	} else {
		s.answerWhole(w, r, i, a)
	}
}

// schedule queues a request for its slot and returns its answer.
func (s *Server) schedule(i int, req request, chat bool, prompt, n int, capped bool, f fault) (answer, error) {
	s.mu.Lock()
	arrived := time.Now()
	slot, err := s.queue.take(arrived, n)
	s.ids++
	id := s.ids
	s.mu.Unlock()
	if err != nil {
		return answer{}, err
	}
	s.update(i, func(x *Seen) { x.Arrived, x.Slot, x.CompletionTokens = arrived, slot, n })
	a := answer{
		chat: chat, id: fmt.Sprintf("cmpl-%d", id), created: arrived.Unix(), model: req.Model,
		prompt: prompt, n: n, capped: capped, fault: f,
		times: s.c.tokenTimes(slot, n),
	}
	if chat {
		a.id = fmt.Sprintf("chatcmpl-%d", id)
	}
	if f.kind != "no-usage" {
		// A stream carries usage only when asked; a whole answer always.
		a.usage = !req.Stream || req.includeUsage()
		a.nullUsage = req.Stream && a.usage
	}
	return a, nil
}

// stream sends the answer as server-sent events, each flushed at once.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, i int, a answer) {
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	if a.fault.kind == "no-done" {
		w.Header().Set("Connection", "close")
	}
	w.WriteHeader(http.StatusOK)
	if rc.Flush() != nil || !s.streamPieces(w, rc, r.Context(), i, a) {
		return
	}
	if !event(w, rc, a.finish()) {
		return
	}
	if a.usage && !event(w, rc, a.usageChunk()) {
		return
	}
	if a.fault.kind != "no-done" {
		event(w, rc, []byte("[DONE]"))
	}
}

// streamPieces sends each piece at its time. It reports false if the
// stream ended there: the client went away, or a fault cut it short.
func (s *Server) streamPieces(w http.ResponseWriter, rc *http.ResponseController, ctx context.Context, i int, a answer) bool {
	cut := -1
	if a.fault.kind == "stall-after" || a.fault.kind == "drop-after" {
		cut = min(a.fault.n, a.n)
	}
	for k := 0; k <= a.n; k++ {
		if k == cut && a.fault.kind == "stall-after" {
			<-ctx.Done()
			return false
		}
		if k == cut {
			drop(rc)
			return false
		}
		if k == a.n {
			return true
		}
		if !waitUntil(ctx, a.times[k]) || !event(w, rc, a.piece(k)) {
			return false
		}
		s.sent(i, k == 0)
		if k == 0 && a.fault.kind == "malformed" && !event(w, rc, []byte("{not json")) {
			return false
		}
	}
	return true
}

// answerWhole sends the answer as one object, at the time of its last
// piece.
func (s *Server) answerWhole(w http.ResponseWriter, r *http.Request, i int, a answer) {
	ctx := r.Context()
	if a.fault.kind == "stall-after" {
		<-ctx.Done()
		return
	}
	if !waitUntil(ctx, a.times[len(a.times)-1]) {
		return
	}
	body := a.whole()
	switch a.fault.kind {
	case "drop-after":
		drop(http.NewResponseController(w))
		return
	case "malformed":
		body = []byte("{not json")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write(append(body, '\n')); err == nil {
		s.sent(i, true)
	}
}

// sent records that a piece went out now; first says it was the first.
func (s *Server) sent(i int, first bool) {
	now := time.Now()
	s.update(i, func(x *Seen) {
		if first {
			x.FirstToken = now
		}
		x.LastToken = now
	})
}

// event sends one server-sent event and flushes it. It reports false if
// the client went away.
func event(w http.ResponseWriter, rc *http.ResponseController, data []byte) bool {
	b := make([]byte, 0, len(data)+8)
	b = append(append(append(b, "data: "...), data...), "\n\n"...)
	if _, err := w.Write(b); err != nil {
		return false
	}
	return rc.Flush() == nil
}

// drop closes the connection under a response, so that the client sees
// it end with no end of the body.
func drop(rc *http.ResponseController) {
	if conn, _, err := rc.Hijack(); err == nil {
		conn.Close()
	}
}
