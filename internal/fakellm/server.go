package fakellm

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"
)

// MaxBody is the largest request body the fake reads, in bytes.
const MaxBody = 32 << 20

// Seen is what the fake was asked by one request, and when it answered.
type Seen struct {
	// Path is the request's URL path.
	Path string
	// Authorization is the request's Authorization header, as sent.
	Authorization string
	// Status is the HTTP status it answered.
	Status int
	// Model, Stream, MaxTokens, MaxCompletionTokens, Temperature, Seed and
	// IncludeUsage are the request's fields; a pointer is nil when the
	// field was left out.
	Model               string
	Stream              bool
	MaxTokens           *int
	MaxCompletionTokens *int
	Temperature         *float64
	Seed                *int64
	IncludeUsage        bool
	// PromptTokens is the prompt's words; CompletionTokens the pieces it
	// meant to send.
	PromptTokens, CompletionTokens int
	// Arrived is when the fake had read the request; Slot the start of
	// the slot it was served in (zero if none).
	Arrived, Slot time.Time
	// FirstToken and LastToken are when it had sent the first and the
	// last piece (zero if it did not): for an answer that is not
	// streamed, both are when it sent the answer.
	FirstToken, LastToken time.Time
}

// Server is the fake model server, an http.Handler.
type Server struct {
	c     Config
	err   error // what is wrong with c
	fault fault

	mu    sync.Mutex
	queue queue
	seen  []Seen
	ids   int
	// completions counts the completion requests, for Config.FaultAfter.
	completions int
}

// NewHandler returns a fake server with config c. If c is not valid (see
// Config.Validate), it answers every request with 500 and says why.
func NewHandler(c Config) *Server {
	s := &Server{c: c, err: c.Validate(), queue: queue{c: c}}
	s.fault, _ = parseFault(c.Fault)
	return s
}

// Requests returns what the server was asked, in the order the requests
// came.
func (s *Server) Requests() []Seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.seen)
}

// record adds a request's Seen and returns its index for update.
func (s *Server) record(r *http.Request) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = append(s.seen, Seen{Path: r.URL.Path, Authorization: r.Header.Get("Authorization")})
	return len(s.seen) - 1
}

func (s *Server) update(i int, f func(*Seen)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.seen[i])
}

// ServeHTTP answers the OpenAI API's chat and text completions and its
// list of models.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	i := s.record(r)
	w = &statusWriter{ResponseWriter: w, status: func(code int) { s.update(i, func(x *Seen) { x.Status = code }) }}
	if s.err != nil {
		writeError(w, http.StatusInternalServerError, s.err.Error(), "server_error", "")
		return
	}
	if !s.authorized(r) {
		writeError(w, http.StatusUnauthorized, "Incorrect API key provided", "invalid_request_error", "invalid_api_key")
		return
	}
	route := map[string]string{"/v1/models": http.MethodGet, "/v1/chat/completions": http.MethodPost, "/v1/completions": http.MethodPost}
	method, ok := route[r.URL.Path]
	switch {
	case !ok:
		writeError(w, http.StatusNotFound, fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path), "invalid_request_error", "")
	case r.Method != method:
		writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("Invalid method for URL (%s %s)", r.Method, r.URL.Path), "invalid_request_error", "")
	case r.URL.Path == "/v1/models":
		s.models(w)
	default:
		s.complete(w, r, i, r.URL.Path == "/v1/chat/completions")
	}
}

func (s *Server) authorized(r *http.Request) bool {
	if s.c.APIKey == "" {
		return true
	}
	want := "Bearer " + s.c.APIKey
	return subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte(want)) == 1
}

func (s *Server) models(w http.ResponseWriter) {
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		OwnedBy string `json:"owned_by"`
	}
	names := s.c.Models
	if len(names) == 0 {
		names = []string{"fakellm"}
	}
	list := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{Object: "list", Data: []model{}}
	for _, n := range names {
		list.Data = append(list.Data, model{n, "model", "fakellm"})
	}
	writeJSON(w, http.StatusOK, list)
}

// faultOf is the fault of the completion request that comes now: none
// for the first Config.FaultAfter of them.
func (s *Server) faultOf() fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.completions++; s.completions <= s.c.FaultAfter {
		return fault{}
	}
	return s.fault
}

// misbehave answers as the status and redirect faults say, and reports
// whether it did.
func (s *Server) misbehave(w http.ResponseWriter, r *http.Request, f fault) bool {
	switch f.kind {
	case "status":
		writeError(w, f.n, fmt.Sprintf("fake failure %d", f.n), errorType(f.n), "")
		return true
	case "redirect":
		to := &url.URL{Path: "/elsewhere"}
		if s.c.RedirectTo != "" {
			u, err := url.Parse(s.c.RedirectTo)
			if err != nil {
				writeError(w, http.StatusInternalServerError, "redirect: "+err.Error(), "server_error", "")
				return true
			}
			if to = u; to.Path == "" {
				to.Path = "/elsewhere"
			}
		}
		http.Redirect(w, r, to.String(), http.StatusTemporaryRedirect)
		return true
	}
	return false
}

func errorType(status int) string {
	if status >= 500 {
		return "server_error"
	}
	return "invalid_request_error"
}

// readBody reads a request's body, up to MaxBody.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("The request body is larger than %d bytes.", MaxBody), "invalid_request_error", "")
		return nil, false
	case err != nil:
		writeError(w, http.StatusBadRequest, "read the request body: "+err.Error(), "invalid_request_error", "")
		return nil, false
	}
	return body, true
}

// writeError writes an error as OpenAI does; code "" is null.
func writeError(w http.ResponseWriter, status int, msg, typ, code string) {
	var e struct {
		Error struct {
			Message string  `json:"message"`
			Type    string  `json:"type"`
			Param   *string `json:"param"`
			Code    *string `json:"code"`
		} `json:"error"`
	}
	e.Error.Message, e.Error.Type = msg, typ
	if code != "" {
		e.Error.Code = &code
	}
	writeJSON(w, status, e)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b := marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// statusWriter records the status a handler answers.
type statusWriter struct {
	http.ResponseWriter
	status func(int)
	wrote  bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.wrote = true
		w.status(code)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController flush and hijack the connection.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
