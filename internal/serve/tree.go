package serve

import (
	"errors"
	"fmt"
	"net/http"
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
	pid, ok := parsePid(arg)
	if !ok {
		return nil, &treeError{http.StatusBadRequest, fmt.Sprintf("pid=%q: give one process id in plain decimal digits, as ps shows it: no sign, spaces or leading zero (?pid=1234)", strings.Join(arg, "&pid="))}
	}
	if why := s.refuseProcesses(r); why != "" {
		return nil, &treeError{http.StatusForbidden, why}
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

// parsePid reads the one pid that ?pid= gives, in the form ps shows:
// decimal digits from 1 to 9 first, within a pid's range. strconv alone
// takes a sign ("+5", from pid=%2B5), and a leading zero would give one
// process two names.
func parsePid(arg []string) (int32, bool) {
	if len(arg) != 1 || arg[0] == "" || arg[0][0] == '0' {
		return 0, false
	}
	for _, c := range arg[0] {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	pid, err := strconv.ParseInt(arg[0], 10, 32)
	return int32(pid), err == nil
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
	case errors.Is(err, attrib.ErrNoProcess), err == nil && !t.Readable():
		// One answer for both: which pids run, and whose they are, is
		// not the asker's to learn from serve.
		k.Close()
		return nil, s.noSuchProcess(pid)
	case err != nil:
		k.Close()
		return nil, &treeError{http.StatusNotImplemented, err.Error()}
	}
	tr := &tree{k: k, t: t, done: make(chan struct{}), release: s.releaseTree}
	go t.Run(tr.done, attrib.PollInterval)
	return tr, nil
}

// noSuchProcess refuses pid, which is not running or not serve's to
// read, in words that do not tell the two apart.
func (s *Server) noSuchProcess(pid int32) error {
	msg := fmt.Sprintf("no process %d that this serve may follow: it follows running processes", pid)
	if !s.cfg.Root {
		msg += " of the user it runs as; check the pid (pgrep -l NAME), or run serve as the process's user"
	} else {
		msg += "; check the pid (pgrep -l NAME)"
	}
	return &treeError{http.StatusNotFound, msg}
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
