package serve

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/exopower/exopower/internal/attrib"
	"github.com/exopower/exopower/internal/sampler"
	"github.com/exopower/exopower/internal/wire"
)

// tree is the process tree that a span names (?pid=): the process and
// its descendants, read every attrib.PollInterval while the span is open,
// each counted from the span's start.
type tree struct {
	k       attrib.Kernel
	t       *attrib.Tracker
	done    chan struct{}
	once    sync.Once
	release func() // gives its place among the MaxProcessSpans back
}

// treeError is a span's process that cannot be followed: the status to
// answer with, and why.
type treeError struct {
	code int
	msg  string
}

func (e *treeError) Error() string { return e.msg }

// openTree follows the tree of the process that the request names with
// ?pid=, or returns nil where it names none.
func (s *Server) openTree(r *http.Request) (*tree, error) {
	arg, named := r.URL.Query()["pid"]
	if !named {
		return nil, nil
	}
	pid, err := strconv.ParseInt(arg[0], 10, 32)
	if err != nil || pid <= 0 || len(arg) > 1 {
		return nil, &treeError{http.StatusBadRequest, fmt.Sprintf("pid=%s: give one process id, a positive whole number (?pid=1234)", strings.Join(arg, "&pid="))}
	}
	if s.cfg.Processes == nil {
		return nil, &treeError{http.StatusNotImplemented, "this serve reads no processes: spans that name one (?pid=) need macOS 13 or later"}
	}
	if !s.reserveTree() {
		return nil, &treeError{http.StatusTooManyRequests, fmt.Sprintf("%d spans that name a process are open, the most there may be: end some", MaxProcessSpans)}
	}
	tr, err := s.follow(int32(pid))
	if err != nil {
		s.releaseTree()
	}
	return tr, err
}

// reserveTree takes a place among the MaxProcessSpans, or reports false.
func (s *Server) reserveTree() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.trees >= MaxProcessSpans {
		return false
	}
	s.trees++
	return true
}

func (s *Server) releaseTree() {
	s.mu.Lock()
	s.trees--
	s.mu.Unlock()
}

// follow starts reading the tree of pid.
func (s *Server) follow(pid int32) (*tree, error) {
	k, err := s.cfg.Processes()
	if err != nil {
		return nil, &treeError{http.StatusNotImplemented, "spans that name a process (?pid=): " + err.Error()}
	}
	if info := k.Info(); !info.ProcessEnergy {
		k.Close()
		return nil, &treeError{http.StatusNotImplemented, fmt.Sprintf("spans that name a process (?pid=): this Mac keeps no energy per process (macOS %s, %s): "+
			"it needs macOS 13 or later on Apple Silicon, not in a virtual machine", info.MacOS, info.Chip)}
	}
	t, err := attrib.Track(k, pid, false, 0)
	switch {
	case errors.Is(err, attrib.ErrNoProcess):
		k.Close()
		return nil, &treeError{http.StatusNotFound, fmt.Sprintf("no process %d", pid)}
	case err != nil:
		k.Close()
		return nil, &treeError{http.StatusNotImplemented, err.Error()}
	case !t.Readable():
		k.Close()
		return nil, &treeError{http.StatusForbidden, fmt.Sprintf("process %d is another user's: serve, running as user %d, may not read its energy; "+
			"run serve as the process's user", pid, os.Geteuid())}
	}
	tr := &tree{k: k, t: t, done: make(chan struct{}), release: s.releaseTree}
	go t.Run(tr.done, attrib.PollInterval)
	return tr, nil
}

// stop stops reading the tree and releases the kernel's accounting.
func (t *tree) stop() {
	if t == nil {
		return
	}
	t.once.Do(func() {
		close(t.done)
		t.t.Close() // once no reading is under way
		t.release()
	})
}

// attribution is what the tree drew over the span so far, or, ended, in
// all, beside the Mac's energy over the span, with its warnings.
func (t *tree) attribution(r sampler.Result, ended bool) (*wire.Attribution, []string) {
	if t == nil {
		return nil, nil
	}
	// An open span's reading is as of the last poll, a moment after its
	// newest window; the one that ends it, as of its end.
	res := t.t.Snapshot()
	if ended {
		t.t.Poll()
		res = t.t.Result()
		defer t.stop()
	}
	a := res.Wire(attrib.PollInterval, r.Energy, r.Has, t.k.Info())
	return a, append(res.Warnings, attrib.RemainderWarnings(a)...)
}
