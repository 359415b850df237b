package serve

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

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

	mu     sync.Mutex
	goneAt time.Time // when Reclaim first found the tree gone
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
	if why := s.refuseProcesses(r, "a process (?pid=)"); why != "" {
		return nil, &treeError{http.StatusForbidden, why}
	}
	if s.cfg.Processes == nil {
		return nil, &treeError{http.StatusNotImplemented, "this serve reads no processes: spans that name one (?pid=) need macOS 13 or later"}
	}
	c := clientOf(r)
	if why := s.reserveTree(c); why != "" {
		return nil, &treeError{http.StatusTooManyRequests, why}
	}
	tr, err := s.follow(pid)
	if err != nil {
		s.releaseTree(c)
		return nil, err
	}
	tr.release = func() { s.releaseTree(c) }
	return tr, nil
}

// client is who holds a share of the MaxProcessSpans: key tells clients
// apart, name says who it is in an answer.
type client struct{ key, name string }

// clientOf is the client that r comes from: the user whose password it
// gave, from wherever; without one, its address, where every loopback
// address is one client, this machine's, as any user of the Mac may ask
// from any of them (and serve cannot tell its users apart).
func clientOf(r *http.Request) client {
	if user, ok := userOf(r); ok {
		return client{"user " + user, "user " + user}
	}
	if loopback(r) {
		return client{"loopback", "this Mac's clients without a password (one client, as any user of the Mac may ask from any loopback address)"}
	}
	host, _, _ := net.SplitHostPort(r.RemoteAddr)
	return client{"address " + host, "address " + host}
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

// reserveTree takes a place among the MaxProcessSpans for c, or says why
// there is none.
func (s *Server) reserveTree(c client) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	free := fmt.Sprintf("end some (a span gives its place back %v after its processes are gone)", TreeGoneAfter)
	switch {
	case s.trees >= MaxProcessSpans:
		return fmt.Sprintf("%d spans that name a process are open, the most there may be: %s", MaxProcessSpans, free)
	case s.treesBy[c.key] >= MaxProcessSpansPerClient:
		return fmt.Sprintf("%d spans that name a process are open for %s, the most one client may hold: %s", MaxProcessSpansPerClient, c.name, free)
	}
	s.trees++
	s.treesBy[c.key]++
	return ""
}

func (s *Server) releaseTree(c client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.trees--
	if s.treesBy[c.key]--; s.treesBy[c.key] == 0 {
		delete(s.treesBy, c.key)
	}
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
	tr := &tree{k: k, t: t, done: make(chan struct{})}
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

// goneFor is how long the tree has been gone, as Reclaim found it at
// now: 0 while a process of it runs.
func (t *tree) goneFor(now time.Time) time.Duration {
	gone := t.t.Gone()
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case !gone:
		t.goneAt = time.Time{}
	case t.goneAt.IsZero():
		t.goneAt = now
	}
	if !gone {
		return 0
	}
	return now.Sub(t.goneAt)
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
